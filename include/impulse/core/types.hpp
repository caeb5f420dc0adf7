// Scalar and Eigen aliases used throughout Impulse.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace impulse {

using Scalar = double;
using Index = int;

using Vec3 = Eigen::Matrix<Scalar, 3, 1>;
using Vec4 = Eigen::Matrix<Scalar, 4, 1>;
using Vec6 = Eigen::Matrix<Scalar, 6, 1>;
using Mat3 = Eigen::Matrix<Scalar, 3, 3>;
using Mat6 = Eigen::Matrix<Scalar, 6, 6>;
using Mat36 = Eigen::Matrix<Scalar, 3, 6>;
using Mat6X = Eigen::Matrix<Scalar, 6, Eigen::Dynamic>;
using Mat3X = Eigen::Matrix<Scalar, 3, Eigen::Dynamic>;
using VecX = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
using MatX = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
using Quat = Eigen::Quaternion<Scalar>;

// Read-only and writable views of vectors, so functions accept VecX, blocks and Maps.
using VecXcref = Eigen::Ref<const VecX>;
using VecXref = Eigen::Ref<VecX>;
using MatXcref = Eigen::Ref<const MatX>;
using MatXref = Eigen::Ref<MatX>;

}  // namespace impulse
