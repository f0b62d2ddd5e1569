#pragma once
#include <optional>
#include <string_view>

namespace hucprof {

// The value of the last `name=value` kernel parameter on a /proc/cmdline line (the kernel
// applies them in order, so the last one is in force), quotes removed; nullopt when absent.
// Stops at a bare "--": what follows goes to init, not to the kernel. '-' and '_' in the name
// are interchangeable, as for the kernel.
std::optional<std::string_view> find_kernel_param(std::string_view cmdline, std::string_view name);

// The value of `key` in a kernel .config text: "y" for `KEY=y`, "n" for `# KEY is not set`,
// the text after '=' otherwise; nullopt when the option is not in this kernel's config.
std::optional<std::string_view> config_option(std::string_view config, std::string_view key);

// The kernel's kstrtobool(): looks at the first one or two characters only, like the kernel,
// so "yes" is true and "offline" is false. nullopt when the kernel would reject the value.
std::optional<bool> kernel_strtobool(std::string_view value);

}  // namespace hucprof
