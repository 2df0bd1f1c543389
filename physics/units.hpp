// Unit conversions between deck units (bar, day, mD, cP, ...) and SI used inside.
#pragma once

namespace blockres::units {

inline constexpr double bar = 1.0e5;                 // Pa
inline constexpr double day = 86400.0;               // s
inline constexpr double millidarcy = 9.869233e-16;   // m^2
inline constexpr double centipoise = 1.0e-3;         // Pa s
inline constexpr double per_bar = 1.0 / bar;         // 1/Pa
inline constexpr double m3_per_day = 1.0 / day;      // m^3/s
inline constexpr double standard_gravity = 9.80665;  // m/s^2

}  // namespace blockres::units
