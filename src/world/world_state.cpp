// Binary form of a WorldState (layout in docs/state-format.md). Every integer and double is
// written byte by byte in little-endian order (doubles as their IEEE-754 bit pattern), so the
// bytes are the same on every platform and a restored state is bit-identical.
#include "impulse/world/world_state.hpp"

#include <cmath>
#include <cstring>

namespace impulse {

namespace {

constexpr char kMagic[4] = {'I', 'M', 'P', 'S'};
// Upper bounds that keep a corrupt size field from asking for gigabytes before the checksum is
// checked (the sizes are also checked against the remaining bytes).
constexpr std::uint64_t kMaxCount = 1u << 26;

// FNV-1a, 64 bit: detects truncation and corruption (not an authentication code).
std::uint64_t fnv1a(const char* data, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

class Writer {
 public:
  void u8(std::uint8_t x) { out_.push_back(static_cast<char>(x)); }
  void u32(std::uint32_t x) {
    for (int k = 0; k < 4; ++k) u8(static_cast<std::uint8_t>(x >> (8 * k)));
  }
  void u64(std::uint64_t x) {
    for (int k = 0; k < 8; ++k) u8(static_cast<std::uint8_t>(x >> (8 * k)));
  }
  void i64(Index x) { u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(x))); }
  void f64(double x) {
    std::uint64_t b;
    static_assert(sizeof(b) == sizeof(x), "double must be 64 bit");
    std::memcpy(&b, &x, sizeof(b));
    u64(b);
  }
  void vec(const VecX& v) {
    for (Index i = 0; i < v.size(); ++i) f64(v[i]);
  }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const std::string& bytes, std::size_t end) : s_(bytes), end_(end) {}
  [[noreturn]] void fail(const std::string& msg) const {
    throw StateFormatError("world state: " + msg + " (at byte " + std::to_string(pos_) + ")");
  }
  void need(std::uint64_t n) const {
    if (n > end_ - pos_) fail("truncated");
  }
  std::uint8_t u8() {
    need(1);
    return static_cast<std::uint8_t>(s_[pos_++]);
  }
  std::uint32_t u32() {
    need(4);
    std::uint32_t x = 0;
    for (int k = 0; k < 4; ++k) x |= static_cast<std::uint32_t>(static_cast<unsigned char>(s_[pos_++])) << (8 * k);
    return x;
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t x = 0;
    for (int k = 0; k < 8; ++k) x |= static_cast<std::uint64_t>(static_cast<unsigned char>(s_[pos_++])) << (8 * k);
    return x;
  }
  Index i64() { return static_cast<Index>(static_cast<std::int64_t>(u64())); }
  double f64() {
    const std::uint64_t b = u64();
    double x;
    std::memcpy(&x, &b, sizeof(x));
    return x;
  }
  // A count of items of at least `item_bytes` each: bounded by what is left.
  std::uint64_t count(std::uint64_t value, std::uint64_t item_bytes, const char* what) const {
    if (value > kMaxCount || value * item_bytes > end_ - pos_) {
      fail(std::string(what) + " count " + std::to_string(value) + " exceeds the data");
    }
    return value;
  }
  VecX vec(Index n) {
    need(8 * static_cast<std::uint64_t>(n));
    VecX v(n);
    for (Index i = 0; i < n; ++i) v[i] = f64();
    return v;
  }
  std::string str() {
    const std::uint64_t n = count(u32(), 1, "name length");
    std::string s = s_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::size_t pos() const { return pos_; }

 private:
  const std::string& s_;
  std::size_t end_;
  std::size_t pos_ = 0;
};

// The per-system vectors of the binary form, in order: SystemState's field table
// (stepper/system.hpp), which both the writer and the reader walk, so that they cannot disagree
// on the layout, and restore_state checks with.
using VectorField = SystemState::VectorField;
constexpr const auto& kVectorFields = SystemState::kVectorFields;
constexpr int kWrenchDoubles = 6;  // per body: the pending external wrench

// Doubles of one system's record after its sizes in a given format version: the vectors of the
// table that version has, the wrenches, and (from version 2) the free-flight dt.
std::uint64_t system_doubles(std::uint64_t nq, std::uint64_t nv, std::uint64_t nb, std::uint32_t version) {
  std::uint64_t n = kWrenchDoubles * nb + (version >= 2 ? 1 : 0);
  for (const VectorField& f : kVectorFields) {
    if (f.since <= version) n += f.length == SystemState::Length::Nq ? nq : nv;
  }
  return n;
}

// The writer refuses a state whose vectors do not have the sizes its nq, nv and nb declare (one
// assembled by hand): its bytes would not read back.
void check_writable(const SystemState& s) {
  const auto fail = [&](const std::string& what) {
    throw StateFormatError("world state: cannot write system '" + s.name + "': " + what);
  };
  if (s.nq < 0 || s.nv < 0 || s.nb < 0 || s.nq > 0xffffffffLL || s.nv > 0xffffffffLL || s.nb > 0xffffffffLL) {
    fail("sizes out of range");
  }
  for (const VectorField& f : kVectorFields) {
    const Index want = s.length(f);
    if ((s.*f.member).size() != want) {
      fail(std::string(f.name) + " has " + std::to_string((s.*f.member).size()) + " entries, expected " +
           std::to_string(want));
    }
  }
  if (static_cast<Index>(s.f_ext.size()) != s.nb) {
    fail(std::to_string(s.f_ext.size()) + " external wrenches for " + std::to_string(s.nb) + " bodies");
  }
}

}  // namespace

std::string serialize_state(const WorldState& st) {
  for (const SystemState& s : st.systems) check_writable(s);
  Writer w;
  for (char c : kMagic) w.u8(static_cast<std::uint8_t>(c));
  w.u32(kWorldStateVersion);
  w.f64(st.time);
  w.i64(st.num_objects);
  w.u32(static_cast<std::uint32_t>(st.systems.size()));
  for (const SystemState& s : st.systems) {
    w.str(s.name);
    w.u32(static_cast<std::uint32_t>(s.nq));
    w.u32(static_cast<std::uint32_t>(s.nv));
    w.u32(static_cast<std::uint32_t>(s.nb));
    for (const VectorField& f : kVectorFields) w.vec(s.*f.member);
    w.u8(s.has_f_ext ? 1 : 0);
    for (const Vec6& f : s.f_ext) {
      for (int k = 0; k < 6; ++k) w.f64(f[k]);
    }
    w.f64(s.flight_dt);
  }
  w.u32(static_cast<std::uint32_t>(st.cache.contacts.size()));
  for (const ContactMemory& m : st.cache.contacts) {
    for (Index x : {m.object_a, m.shape_a, m.object_b, m.shape_b}) w.i64(x);
    for (int k = 0; k < 3; ++k) w.f64(m.position[k]);
    for (int k = 0; k < 3; ++k) w.f64(m.impulse_W[k]);
  }
  w.u32(static_cast<std::uint32_t>(st.cache.limits.size()));
  for (const LimitMemory& m : st.cache.limits) {
    w.i64(m.system);
    w.i64(m.dof);
    w.f64(m.sign);
    w.f64(m.lambda);
  }
  const std::string& b = w.bytes();
  w.u64(fnv1a(b.data(), b.size()));
  return std::move(w.bytes());
}

WorldState deserialize_state(const std::string& bytes) {
  if (bytes.size() < 16 || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    throw StateFormatError("world state: not a serialized WorldState (bad magic or too short)");
  }
  const std::size_t end = bytes.size() - 8;
  std::uint64_t stored = 0;
  for (int k = 0; k < 8; ++k) stored |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[end + k])) << (8 * k);
  if (stored != fnv1a(bytes.data(), end)) {
    throw StateFormatError("world state: checksum mismatch (corrupt or truncated)");
  }
  Reader r(bytes, end);
  for (int k = 0; k < 4; ++k) r.u8();
  const std::uint32_t version = r.u32();
  if (version != kWorldStateVersion && version != 1) {  // (version 1: no free-flight history)
    r.fail("version " + std::to_string(version) + " is not supported (this build reads version " +
           std::to_string(kWorldStateVersion) + " and 1)");
  }
  WorldState st;
  st.time = r.f64();
  st.num_objects = r.i64();
  const std::uint64_t ns = r.count(r.u32(), 16, "system");
  st.systems.resize(ns);
  for (SystemState& s : st.systems) {
    s.name = r.str();
    s.nq = r.u32();
    s.nv = r.u32();
    s.nb = r.u32();
    r.count(system_doubles(static_cast<std::uint64_t>(s.nq), static_cast<std::uint64_t>(s.nv),
                           static_cast<std::uint64_t>(s.nb), version),
            8, "state size");
    for (const VectorField& f : kVectorFields) {
      s.*f.member = f.since <= version ? r.vec(s.length(f)) : VecX::Zero(s.length(f));
    }
    const std::uint8_t has_f_ext = r.u8();
    if (has_f_ext > 1) r.fail("external-wrench flag " + std::to_string(has_f_ext) + " is not 0 or 1");
    s.has_f_ext = has_f_ext == 1;
    s.f_ext.assign(static_cast<std::size_t>(s.nb), Vec6::Zero());
    for (Vec6& f : s.f_ext) {
      for (int k = 0; k < 6; ++k) f[k] = r.f64();
    }
    if (version >= 2) {
      s.flight_dt = r.f64();
      if (!(s.flight_dt >= 0) || !std::isfinite(s.flight_dt)) r.fail("free-flight dt is negative or not finite");
    }
  }
  st.cache.contacts.resize(r.count(r.u32(), 80, "contact memory"));
  for (ContactMemory& m : st.cache.contacts) {
    m.object_a = r.i64();
    m.shape_a = r.i64();
    m.object_b = r.i64();
    m.shape_b = r.i64();
    for (int k = 0; k < 3; ++k) m.position[k] = r.f64();
    for (int k = 0; k < 3; ++k) m.impulse_W[k] = r.f64();
  }
  st.cache.limits.resize(r.count(r.u32(), 32, "limit memory"));
  for (LimitMemory& m : st.cache.limits) {
    m.system = r.i64();
    m.dof = r.i64();
    m.sign = r.f64();
    m.lambda = r.f64();
  }
  if (r.pos() != end) r.fail(std::to_string(end - r.pos()) + " trailing bytes");
  return st;
}

}  // namespace impulse
