#include "core/kernel/hardened_state.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace hucprof {
namespace {

// Config fragments as /proc/config.gz prints them (surrounding options included so that a
// prefix match on CONFIG_HARDENED_USERCOPY would be caught).
constexpr const char* kBuiltDefaultOn =
    "CONFIG_HAVE_HARDENED_USERCOPY_ALLOCATOR=y\n"
    "CONFIG_HARDENED_USERCOPY=y\n"
    "CONFIG_HARDENED_USERCOPY_DEFAULT_ON=y\n"
    "CONFIG_FORTIFY_SOURCE=y\n";
constexpr const char* kBuiltDefaultOff =
    "CONFIG_HARDENED_USERCOPY=y\n"
    "# CONFIG_HARDENED_USERCOPY_DEFAULT_ON is not set\n";
constexpr const char* kBuiltNoDefaultOption =  // kernels before the DEFAULT_ON option
    "CONFIG_HAVE_HARDENED_USERCOPY_ALLOCATOR=y\n"
    "CONFIG_HARDENED_USERCOPY=y\n"
    "# CONFIG_HARDENED_USERCOPY_PAGESPAN is not set\n";
constexpr const char* kNotSet =
    "CONFIG_HAVE_HARDENED_USERCOPY_ALLOCATOR=y\n"
    "# CONFIG_HARDENED_USERCOPY is not set\n";
constexpr const char* kAbsent = "CONFIG_HAVE_HARDENED_USERCOPY_ALLOCATOR=y\nCONFIG_SLUB=y\n";
// Only the sub-option: must not be read as the main option being set.
constexpr const char* kOnlyDefaultOn = "CONFIG_HARDENED_USERCOPY_DEFAULT_ON=y\n";

struct Case {
  const char* name;
  std::optional<std::string> config;
  std::string cmdline;
  bool symbol;
  bool enabled;
  std::string reason_part;  // a phrase the reason must contain
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class HardenedStateRules : public testing::TestWithParam<Case> {};

TEST_P(HardenedStateRules, Decides) {
  const Case& c = GetParam();
  std::optional<std::string_view> config;
  if (c.config) config = *c.config;
  auto state = evaluate_hardened_usercopy(config, c.cmdline, c.symbol);
  EXPECT_EQ(state.enabled, c.enabled) << state.reason;
  EXPECT_NE(state.reason.find(c.reason_part), std::string::npos) << state.reason;
}

const std::string kCmd = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet";

INSTANTIATE_TEST_SUITE_P(
    Table, HardenedStateRules,
    testing::Values(
        Case{"default_on", kBuiltDefaultOn, kCmd, true, true, "no boot parameter"},
        Case{"default_off", kBuiltDefaultOff, kCmd, true, false, "DEFAULT_ON is not set"},
        Case{"no_default_option", kBuiltNoDefaultOption, kCmd, true, true, "default on"},
        Case{"param_on_beats_default_off", kBuiltDefaultOff, kCmd + " hardened_usercopy=1", true,
             true, "hardened_usercopy=1"},
        Case{"param_off_beats_default_on", kBuiltDefaultOn, kCmd + " hardened_usercopy=off", true,
             false, "hardened_usercopy=off"},
        Case{"param_off_old_kernel", kBuiltNoDefaultOption, "hardened_usercopy=0", true, false,
             "command line"},
        Case{"not_set", kNotSet, "hardened_usercopy=1", true, false, "is not set"},
        Case{"absent", kAbsent, "hardened_usercopy=on", false, false, "not in the kernel config"},
        Case{"only_sub_option", kOnlyDefaultOn, "", true, false, "not in the kernel config"},
        Case{"no_config_no_symbol", std::nullopt, "hardened_usercopy=1", false, false,
             "not compiled in"},
        Case{"no_config_symbol", std::nullopt, kCmd, true, true, "config unavailable"},
        Case{"no_config_symbol_param_off", std::nullopt, "hardened_usercopy=n", true, false,
             "hardened_usercopy=n"},
        Case{"invalid_param_keeps_default_on", kBuiltDefaultOn, "hardened_usercopy=maybe", true,
             true, "invalid hardened_usercopy=maybe"},
        Case{"invalid_param_keeps_default_off", kBuiltDefaultOff, "hardened_usercopy=", true, false,
             "invalid"},
        Case{"last_param_wins", kBuiltDefaultOn, "hardened_usercopy=0 hardened_usercopy=Y", true,
             true, "hardened_usercopy=Y"},
        Case{"params_after_dashdash_go_to_init", kBuiltDefaultOn, "quiet -- hardened_usercopy=0",
             true, true, "no boot parameter"},
        Case{"dash_spelling", kBuiltDefaultOn, "hardened-usercopy=off", true, false,
             "command line"},
        Case{"other_param_with_same_tail", kBuiltDefaultOn, "xhardened_usercopy=0", true, true,
             "no boot parameter"},
        Case{"config_wins_over_missing_symbol", kBuiltDefaultOn, "", false, true,
             "not in kallsyms"},
        Case{"crlf_config",
             std::string("CONFIG_HARDENED_USERCOPY=y\r\n"
                         "# CONFIG_HARDENED_USERCOPY_DEFAULT_ON is not set\r\n"),
             "", true, false, "default off"}),
    [](const testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// kstrtobool spellings the kernel accepts for hardened_usercopy=.
class HardenedStateBootValues : public testing::TestWithParam<std::pair<const char*, bool>> {};

TEST_P(HardenedStateBootValues, KstrtoboolSyntax) {
  auto [value, enabled] = GetParam();
  std::string cmdline = std::string("hardened_usercopy=") + value;
  // Against the opposite default, so only the parameter can produce the expected result.
  const char* config = enabled ? kBuiltDefaultOff : kBuiltDefaultOn;
  EXPECT_EQ(evaluate_hardened_usercopy(config, cmdline, true).enabled, enabled) << value;
}

INSTANTIATE_TEST_SUITE_P(Values, HardenedStateBootValues,
                         testing::Values(std::pair{"1", true}, std::pair{"y", true},
                                         std::pair{"Y", true}, std::pair{"on", true},
                                         std::pair{"ON", true}, std::pair{"yes", true},
                                         std::pair{"0", false}, std::pair{"n", false},
                                         std::pair{"N", false}, std::pair{"off", false},
                                         std::pair{"OFF", false}, std::pair{"no", false}));

}  // namespace
}  // namespace hucprof
