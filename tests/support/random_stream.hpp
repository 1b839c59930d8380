#pragma once
// The seeded random tx stream lives with the tools that run it (src/app/random_stream.hpp); the
// tests name it testing::RandomStream. The tests' own generator and tx builder come along for the
// tests that build txs beside a stream.
#include "app/random_stream.hpp"
#include "support/rng.hpp"
#include "support/tx_builder.hpp"

namespace tachyon::testing {

using app::RandomStream;
using app::StreamConfig;

}  // namespace tachyon::testing
