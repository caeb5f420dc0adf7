// Settings validation shared by the World, the world-file parser and the CLI (settings.hpp).
#include "impulse/world/settings.hpp"

#include <cmath>

#include "impulse/core/check.hpp"

namespace impulse {

void validate_time_step(Scalar dt) {
  IMPULSE_CHECK(std::isfinite(dt) && dt >= kMinTimeStep && dt <= kMaxTimeStep, "time step must be in [",
                kMinTimeStep, ", ", kMaxTimeStep, "] s, got ", dt);
}

void validate_time(Scalar t) {
  IMPULSE_CHECK(std::isfinite(t) && t >= 0, "time must be finite and >= 0 s, got ", t);
}

void validate_gravity(const Vec3& g) {
  IMPULSE_CHECK(g.allFinite(), "gravity (", g.x(), " ", g.y(), " ", g.z(), ") is not finite");
  IMPULSE_CHECK(g.norm() <= 1e4, "gravity (", g.x(), " ", g.y(), " ", g.z(),
                ") is implausibly large (|g| > 1e4 m/s^2)");
}

void validate_contact_margin(Scalar margin) {
  IMPULSE_CHECK(std::isfinite(margin) && margin >= 0 && margin <= kMaxContactMargin, "contact margin must be in [0, ",
                kMaxContactMargin, "] m, got ", margin);
}

void validate_contact_settings(const DelassusSettings& s) {
  IMPULSE_CHECK(std::isfinite(s.restitution_threshold) && s.restitution_threshold >= 0,
                "restitution threshold must be finite and >= 0 m/s, got ", s.restitution_threshold);
  IMPULSE_CHECK(std::isfinite(s.erp) && s.erp >= 0 && s.erp <= 1, "erp must be in [0, 1], got ", s.erp);
  IMPULSE_CHECK(std::isfinite(s.slop) && s.slop >= 0, "slop must be finite and >= 0 m, got ", s.slop);
  IMPULSE_CHECK(std::isfinite(s.limit_margin) && s.limit_margin >= 0, "limit margin must be finite and >= 0, got ",
                s.limit_margin);
  IMPULSE_CHECK(std::isfinite(s.max_push_velocity) && s.max_push_velocity > 0,
                "max push velocity must be finite and > 0 m/s, got ", s.max_push_velocity);
}

void validate_max_contacts(Index n) {
  IMPULSE_CHECK(n > 0 && n <= kMaxContactsLimit, "max contacts must be in [1, ", kMaxContactsLimit, "], got ", n);
}

}  // namespace impulse
