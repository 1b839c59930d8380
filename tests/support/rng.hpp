#pragma once
// The generator lives with the tools that use it (src/app/rng.hpp); the tests and benchmarks name
// it testing::Rng.
#include "app/rng.hpp"

namespace tachyon::testing {

using app::Rng;

}  // namespace tachyon::testing
