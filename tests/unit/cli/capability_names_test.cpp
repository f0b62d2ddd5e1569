#include "cli/capability_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/capability.h>

#include "parse_helpers.h"

namespace hucprof {
namespace {

CapabilityKeep keep_of(std::string_view text) {
  auto parsed = parse_capability_keep(text);
  if (!parsed.ok()) {
    ADD_FAILURE() << text << ": " << parsed.error().text;
    return {};
  }
  return parsed.value();
}

// Capability numbers from the kernel's UAPI header, not from libcap.
TEST(CapabilityNames, ListsAsCapabilities7SpellsThem) {
  EXPECT_EQ(keep_of("cap_syslog").caps, capability_bit(CAP_SYSLOG));
  EXPECT_EQ(keep_of("cap_syslog,cap_bpf").caps,
            capability_bit(CAP_SYSLOG) | capability_bit(CAP_BPF));
  EXPECT_EQ(keep_of("CAP_PERFMON, syslog").caps,
            capability_bit(CAP_PERFMON) | capability_bit(CAP_SYSLOG));
  EXPECT_EQ(keep_of("cap_net_bind_service").caps, capability_bit(CAP_NET_BIND_SERVICE));
  EXPECT_TRUE(keep_of("all").all);
  EXPECT_TRUE(keep_of("ALL").all);
  EXPECT_FALSE(keep_of("none").all);
  EXPECT_EQ(keep_of("none").caps, 0u);
}

TEST(CapabilityNames, FormatReadsBack) {
  for (const char* text :
       {"all", "none", "cap_syslog", "cap_net_bind_service,cap_syslog,cap_bpf"}) {
    const CapabilityKeep keep = keep_of(text);
    const CapabilityKeep again = keep_of(format_capability_keep(keep));
    EXPECT_EQ(again.all, keep.all) << text;
    EXPECT_EQ(again.caps, keep.caps) << text;
  }
  EXPECT_EQ(format_capability_keep(keep_of("cap_bpf,cap_syslog")), "cap_syslog,cap_bpf");
  EXPECT_EQ(capability_names(0), "none");
}

TEST(CapabilityNames, BadListsAreUsageErrorsNamingTheFlag) {
  EXPECT_EQ(parse_error({"run", "--capabilities.keep", "cap_sysadmin"}),
            "--capabilities.keep: \"cap_sysadmin\" is not a capability name (e.g. cap_syslog, "
            "cap_bpf, cap_perfmon; or all, none)");
  EXPECT_EQ(parse_error({"run", "--capabilities.keep", "34"}),
            "--capabilities.keep: \"34\" is not a capability name (e.g. cap_syslog, cap_bpf, "
            "cap_perfmon; or all, none)");
  EXPECT_EQ(parse_error({"run", "--capabilities.keep", "cap_syslog,"}),
            "--capabilities.keep: empty name in the list \"cap_syslog,\"");
  EXPECT_EQ(parse_error({"run", "--capabilities.keep", ""}),
            "--capabilities.keep: empty (a list such as cap_syslog,cap_bpf, or all, or none)");
  // doctor attaches nothing and drops nothing.
  EXPECT_EQ(parse_error({"doctor", "--capabilities.keep", "all"}),
            "unknown flag --capabilities.keep");
}

TEST(CapabilityNames, DefaultIsSyslogOnly) {
  EXPECT_EQ(parse_run({"run"}).capabilities_keep.caps, capability_bit(CAP_SYSLOG));
  EXPECT_FALSE(parse_run({"run"}).capabilities_keep.all);
}

}  // namespace
}  // namespace hucprof
