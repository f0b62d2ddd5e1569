// The default search against each distribution's own layout: a fake root holding that
// distribution's /etc/os-release and the build's test ELF (inline_chain.c) where its debuginfo
// package installs vmlinux, the object file where it installs a module's debuginfo. The paths
// are the packages' (docs/debuginfo.md cites where each comes from): Debian's
// linux-image-R-dbg and Ubuntu's linux-image-unsigned-R-dbgsym put vmlinux in
// /usr/lib/debug/boot/vmlinux-R, Fedora's kernel-debuginfo in /usr/lib/debug/lib/modules/R/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "build_id_notes.h"
#include "debuginfo/kernel_debuginfo.h"

namespace hucprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The build-id inline_chain.c's object file carries (as a module's .ko does).
constexpr char kModuleBuildId[] = "d4514c0c8789c5c69a83c5762ad58b0f43a5d94e";

struct Layout {
  std::string os_release;  // as the distribution ships it
  std::string release;     // uname -r
  std::string vmlinux;     // where its package installs vmlinux, below /
  std::string module;      // where it installs the debuginfo of module inline_mod, below /
};

class DistroLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("huc-distro-" + std::to_string(getpid()));
    fs::remove_all(root);
    auto opened = VmlinuxFile::open(HUC_INLINE_ELF);
    ASSERT_TRUE(opened.ok());
    vmlinux_build_id = opened.value()->facts().build_id;
    ASSERT_FALSE(vmlinux_build_id.empty());
  }
  void TearDown() override { fs::remove_all(root); }

  static void write(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
  static void copy(const fs::path& from, const fs::path& to) {
    fs::create_directories(to.parent_path());
    fs::copy_file(from, to);
  }

  // The fake root laid out as the distribution has it, searched as the daemon does by default.
  std::unique_ptr<KernelDebuginfo> search(const Layout& l) {
    write(root / "etc/os-release", l.os_release);
    write(root / "sys/kernel/notes", notes_with(vmlinux_build_id));
    write(root / "sys/module/inline_mod/notes/.note.gnu.build-id", notes_with(kModuleBuildId));
    copy(HUC_INLINE_ELF, root / l.vmlinux);
    copy(HUC_INLINE_OBJECT, root / l.module);
    return KernelDebuginfo::find(settings(l.release), true);
  }
  // The default search (no --debuginfo.path), everything read from the fake root.
  DebuginfoSettings settings(const std::string& release) const {
    DebuginfoSettings s;
    s.root = root.string();
    s.release = release;
    s.os_release = (root / "etc/os-release").string();
    s.kernel_notes = (root / "sys/kernel/notes").string();
    s.sys_module = (root / "sys/module").string();
    return s;
  }

  // Found where the package put it, by the default search alone, and it answers.
  void expect_found(KernelDebuginfo& d, const Layout& l) {
    ASSERT_TRUE(d.ready()) << "nothing accepted for " << l.vmlinux;
    EXPECT_EQ(d.report().vmlinux, (root / l.vmlinux).string());
    for (const CandidateCheck& c : d.report().looked) {
      EXPECT_THAT(c.path, StartsWith(root.string())) << "the search left the root";
    }
    const auto modules = d.check_modules({"inline_mod"});
    ASSERT_EQ(modules.size(), 1u);
    EXPECT_EQ(modules[0].file, (root / l.module).string()) << modules[0].problem;
    SourceLinesPtr lines = d.lines(SourceAddress{"inline_mod", "udp_recvmsg", 8, 0});
    ASSERT_TRUE(lines);
    EXPECT_EQ(lines->back().function, "udp_recvmsg");
  }

  fs::path root;
  std::string vmlinux_build_id;
};

TEST_F(DistroLayoutTest, Debian) {
  const Layout debian{
      "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n"
      "VERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n",
      "6.1.0-57-amd64", "usr/lib/debug/boot/vmlinux-6.1.0-57-amd64",
      "usr/lib/debug/lib/modules/6.1.0-57-amd64/kernel/net/inline-mod.ko"};
  auto d = search(debian);
  expect_found(*d, debian);
  EXPECT_EQ(d->report().install, "apt-get install linux-image-6.1.0-57-amd64-dbg");
}

TEST_F(DistroLayoutTest, Ubuntu) {
  const Layout ubuntu{
      "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\n"
      "VERSION=\"22.04.4 LTS (Jammy Jellyfish)\"\nVERSION_CODENAME=jammy\nID=ubuntu\n"
      "ID_LIKE=debian\nUBUNTU_CODENAME=jammy\n",
      "5.15.0-105-generic", "usr/lib/debug/boot/vmlinux-5.15.0-105-generic",
      "usr/lib/debug/lib/modules/5.15.0-105-generic/kernel/net/inline-mod.ko"};
  auto d = search(ubuntu);
  expect_found(*d, ubuntu);
  // ID_LIKE=debian, but Debian's -dbg package does not exist there.
  EXPECT_THAT(d->report().install,
              StartsWith("apt-get install linux-image-5.15.0-105-generic-dbgsym "));
  EXPECT_THAT(d->report().install, HasSubstr("ddebs.ubuntu.com"));
}

TEST_F(DistroLayoutTest, Fedora) {
  const Layout fedora{
      "NAME=\"Fedora Linux\"\nVERSION=\"40 (Workstation Edition)\"\nID=fedora\nVERSION_ID=40\n"
      "PLATFORM_ID=\"platform:f40\"\n",
      "6.8.5-301.fc40.x86_64", "usr/lib/debug/lib/modules/6.8.5-301.fc40.x86_64/vmlinux",
      "usr/lib/debug/lib/modules/6.8.5-301.fc40.x86_64/kernel/net/inline-mod.ko.debug"};
  auto d = search(fedora);
  expect_found(*d, fedora);
  EXPECT_EQ(d->report().install, "dnf debuginfo-install kernel-6.8.5-301.fc40.x86_64");
}

// Debian's 7.x kernels are split into linux-binary-R, linux-modules-R and linux-base-R, but their
// debuginfo stays one package, linux-image-R-dbg, and installs vmlinux three times over. The
// file lists are Debian's own (its archive's Contents index, tests/data): each vmlinux path the
// package installs is found by the default search alone, a module's debuginfo in its directory,
// and doctor's install command names the package that holds them.
struct PackageFiles {
  std::vector<std::string> vmlinux;  // every vmlinux it installs, below /
  std::string module_dir;            // where algif_hash.ko is, below /
};

std::map<std::string, PackageFiles> debian_7x_dbg_packages() {
  std::map<std::string, PackageFiles> out;
  std::ifstream in(HUC_TEST_DATA_DIR "/debian_7x_dbg_contents.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string path, section_package;
    words >> path >> section_package;
    PackageFiles& p = out[section_package.substr(section_package.find('/') + 1)];
    if (fs::path(path).filename() == "algif_hash.ko") {
      p.module_dir = fs::path(path).parent_path().string();
    } else {
      p.vmlinux.push_back(path);
    }
  }
  return out;
}

TEST_F(DistroLayoutTest, Debian7xSplitKernelsDebugPackage) {
  const auto packages = debian_7x_dbg_packages();
  ASSERT_EQ(packages.size(), 4u) << "trixie-backports and sid, amd64 and arm64";
  for (const auto& [package, files] : packages) {
    const std::string release =
        package.substr(std::string("linux-image-").size(),
                       package.size() - std::string("linux-image--dbg").size());
    ASSERT_EQ(files.vmlinux.size(), 3u) << package;
    ASSERT_FALSE(files.module_dir.empty()) << package;
    for (const std::string& vmlinux : files.vmlinux) {
      SCOPED_TRACE(package + ": " + vmlinux);
      fs::remove_all(root);
      const Layout debian{
          "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nNAME=\"Debian GNU/Linux\"\n"
          "VERSION_ID=\"13\"\nVERSION_CODENAME=trixie\nID=debian\n",
          release, vmlinux, files.module_dir + "/inline-mod.ko"};
      auto d = search(debian);
      expect_found(*d, debian);
      EXPECT_EQ(d->report().install, "apt-get install " + package);
    }
  }
}

TEST_F(DistroLayoutTest, TheHostsPlacesAreNotLookedAtUnderAnotherRoot) {
  // Nothing installed in the fake root: every candidate is absent, none outside it was opened.
  write(root / "sys/kernel/notes", notes_with(vmlinux_build_id));
  auto d = KernelDebuginfo::find(settings("6.1.0-57-amd64"), true);
  EXPECT_FALSE(d->ready());
  ASSERT_FALSE(d->report().looked.empty());
  for (const CandidateCheck& c : d->report().looked) {
    EXPECT_THAT(c.path, StartsWith(root.string()));
    EXPECT_EQ(c.outcome, CandidateCheck::Absent) << c.path;
  }
}

}  // namespace
}  // namespace hucprof
