// What tachyon-load reads from the server's /metrics page: a family's samples summed over their
// labels, nothing taken from comments or from a family whose name only begins the same way.
#include <gtest/gtest.h>

#include "server_stats.hpp"

namespace tachyon::load {
namespace {

constexpr const char* kPage =
    "# HELP tachyon_signature_checks_total Ed25519 checks\n"
    "# TYPE tachyon_signature_checks_total counter\n"
    "tachyon_signature_checks_total{type=\"create_order\"} 1200\n"
    "tachyon_signature_checks_total{type=\"cancel_order\"} 34\n"
    "tachyon_signature_checks_totally 5\n"
    "tachyon_signature_check_cpu_seconds_total{type=\"create_order\"} 0.0625\n"
    "tachyon_signature_check_cpu_seconds_total{type=\"cancel_order\"} 0.5\n"
    "tachyon_journal_group_commit_txs_count 77\n"
    "tachyon_plain 3";

TEST(MetricSum, sums_a_familys_samples_over_their_labels) {
  EXPECT_DOUBLE_EQ(metric_sum(kPage, "tachyon_signature_checks_total"), 1234);
  EXPECT_DOUBLE_EQ(metric_sum(kPage, "tachyon_signature_check_cpu_seconds_total"), 0.5625);
  EXPECT_DOUBLE_EQ(metric_sum(kPage, "tachyon_plain"), 3);  // no labels, the page's last line
  EXPECT_DOUBLE_EQ(metric_sum(kPage, "tachyon_absent_total"), -1);
  EXPECT_DOUBLE_EQ(metric_sum(kPage, "tachyon_signature_checks"), -1);  // only a longer name
  EXPECT_EQ(group_commits_in(kPage), 77);
}

}  // namespace
}  // namespace tachyon::load
