#pragma once
// The tx builder lives with the tools that use it (src/app/tx_builder.hpp); the tests and
// benchmarks name it testing::TxBuilder.
#include "app/tx_builder.hpp"

namespace tachyon::testing {

using app::demo_market_params;
using app::TxBuilder;

}  // namespace tachyon::testing
