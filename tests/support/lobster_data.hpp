#pragma once
// The LOBSTER reader lives with tachyon-load (src/load/lobster_data.hpp); the tests name it
// testing::lobster.
#include "load/lobster_data.hpp"

namespace tachyon::testing {

namespace lobster = load::lobster;

}  // namespace tachyon::testing
