// The 1D multicomponent tracer deck of issue 28 item 10 (200 cells, component T absent at t = 0), shared by
// the Newton-run tests (what fails on it and what the message names) and the default-solver tests (the
// default runs it through).
#pragma once

#include <string>

namespace blockres::test_decks {

inline const std::string kTracerDeck = R"(title = "1D tracer"
[model]
type = "multicomponent"
[grid]
nx = 200
ny = 1
nz = 1
dx = 1.0
dy = 10.0
dz = 10.0
top = 1000.0
gravity = false
[rock]
porosity = 0.2
kx = 500.0
compressibility = 1e-5
reference_pressure = 100.0
[components]
names = ["T", "W"]
density = [1000.0, 1000.0]
compressibility = 1e-5
viscosity = [0.5, 0.5]
reference_pressure = 100.0
diffusion = 1e-3
[initial]
pressure = 100.0
composition = [0.0, 1.0]
[[wells]]
name = "INJ"
type = "injector"
i = 1
j = 1
control = "rate"
rate = 2000.0
bhp = 1000.0
composition = [1.0, 0.0]
[[wells]]
name = "PROD"
type = "producer"
i = 200
j = 1
control = "bhp"
bhp = 100.0
[schedule]
end_time = 2.0
report_interval = 2.0
dt_initial = 0.1
dt_max = 0.5
[output]
vtk = false
)";

}  // namespace blockres::test_decks
