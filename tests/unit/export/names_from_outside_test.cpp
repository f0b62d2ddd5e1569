// Issue 37, D6: a name that came from outside (DWARF, a profile, a cgroup or pod, a command)
// reached the terminal, the SVG and the web page as it was: ESC ] 0 ; ... BEL retitled the
// terminal, a control character made the SVG ill-formed XML, invalid UTF-8 went out under
// charset=utf-8. Every view of one profile whose every name is hostile is checked here for what
// its destination needs (the real binary, Python's parsers and Chromium check it in
// tests/cli/test_bad_input.py and tests/tools/test_flame_graph_browser.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/base/quoted_value.h"
#include "core/base/utf8.h"
#include "core/cost/usercopy_cost.h"
#include "core/symbols/stack_interner.h"
#include "export/views/flame_graph_svg.h"
#include "export/views/report_text.h"
#include "export/views/web_view.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A name of each kind of trouble: a terminal title sequence, NUL, a C1 CSI, a noncharacter XML
// forbids, a byte that is not UTF-8, markup, and 5 000 bytes (DWARF names have no bound).
const std::string kTitle = std::string("evil\x1b]0;pwned\x07", 14) + std::string(1, '\0') + "nul";
const std::string kCsi =
    "csi\xc2\x9b"
    "2J";
const std::string kNonchar = "non\xef\xbf\xbe";
const std::string kBadByte = "bad\xff";
const std::string kMarkup = "<script>&";
const std::string kLong = "long_" + std::string(5000, 'x');

// What every byte of a view must be for a terminal, an XML parser and a browser alike: UTF-8,
// no control character but the line breaks, no noncharacter.
void expect_printable(const std::string& text, const char* view) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t length = utf8_sequence_length(rest);
    ASSERT_NE(length, 0u) << view << ": not UTF-8 at " << text.size() - rest.size();
    const std::string_view c = rest.substr(0, length);
    if (length == 1) {
      const auto byte = static_cast<unsigned char>(c[0]);
      ASSERT_TRUE(byte == '\n' || (byte >= 0x20 && byte != 0x7f))
          << view << ": control byte " << int{byte} << " at " << text.size() - rest.size();
    }
    ASSERT_FALSE(length == 2 && static_cast<unsigned char>(c[0]) == 0xc2 &&
                 static_cast<unsigned char>(c[1]) < 0xa0)
        << view << ": C1 control";
    ASSERT_NE(c, "\xef\xbf\xbe") << view;
    rest.remove_prefix(length);
  }
}

class NamesFromOutside : public testing::Test {
 protected:
  StackProfile hostile() {
    StackProfile p;
    p.sampling = true;
    p.sample_period_ns = 10101010;
    p.duration_ns = 10'000'000'000;
    p.sampled_by_context = {{"kernel", 100}, {"user", 50}};
    p.kernel = "6.1\x1b[31m";
    p.hardened_usercopy = "on\x07";
    p.target = "cgroup /x\x1b[2J";  // a cgroup's name is anyone's to choose
    ProfileFrame inlined{kLong, "", 0, 0};
    inlined.source = std::make_shared<const SourceLines>(
        SourceLines{{kNonchar, "fs/\x1b[2Jread.c", 12}, {kLong, "net/x\xff.c", 40}});
    ProfileStack stack{interner_.frame({"__check_object_size", "", 0, 0}),
                       interner_.frame({kTitle, kBadByte, 0, 0}), interner_.frame(inlined),
                       interner_.frame({kCsi, "", 0, 0}), interner_.frame({kMarkup, "", 0, 0})};
    const LabelsPtr labels = interner_.with_workload(make_labels({kTitle, kCsi, kBadByte, ""}),
                                                     "pod\n" + kMarkup, "pod\x07");
    ProfileSample s{interner_.stack(stack), labels, {}};
    s.values[kSamples] = 40;
    p.samples = {s};
    return p;
  }
  StackInterner interner_;
};

TEST_F(NamesFromOutside, TheReportIsPrintableTextWithTheNamesShownEscaped) {
  const StackProfile p = hostile();
  const std::string report = render_report(p, summarize_cost(p));
  expect_printable(report, "report");
  EXPECT_THAT(report, HasSubstr("evil\\x1b]0;pwned\\x07\\x00nul [bad\\xff]"));
  EXPECT_THAT(report, HasSubstr("csi\\xc2\\x9b2J"));
  EXPECT_THAT(report, HasSubstr("kernel 6.1\\x1b[31m"));
  EXPECT_THAT(report, HasSubstr("busy CPU of: cgroup /x\\x1b[2J\n"));
  EXPECT_THAT(report, HasSubstr("pod\\x0a<script>&"));
  EXPECT_THAT(report, Not(HasSubstr(std::string(kMaxNameBytes, 'x'))))
      << "a name is shown at most kMaxNameBytes long";
  EXPECT_THAT(report, HasSubstr(std::string(kMaxNameBytes - 8, 'x') + "…"));
}

TEST_F(NamesFromOutside, TheFlameGraphIsWellFormedXmlWithTheNamesShownEscaped) {
  const std::string svg = render_profile_flame_graph(hostile(), "file\x1b]0;x\x07.pb.gz");
  expect_printable(svg, "svg");
  EXPECT_THAT(svg, HasSubstr("file\\x1b]0;x\\x07.pb.gz"));
  EXPECT_THAT(svg, HasSubstr("<title>evil\\x1b]0;pwned\\x07\\x00nul: 40 samples"));
  EXPECT_THAT(svg, HasSubstr("&lt;script&gt;&amp;"));
  EXPECT_THAT(svg, HasSubstr("non\\xef\\xbf\\xbe"));
  EXPECT_THAT(svg, Not(HasSubstr("<script>")));
  // The long name is cut, and its source line and numbers after it in its title are still there.
  EXPECT_THAT(svg,
              HasSubstr(std::string(kMaxNameBytes - 8, 'x') + "… (net/x\\xff.c:40): 40 samples"));
}

TEST_F(NamesFromOutside, TheWebPageIsUtf8HtmlWithTheNamesShownEscaped) {
  WebViewInput in;
  in.window = hostile();
  in.mode = "auto";
  in.snapshot.mutable_build()->set_kernel("6.1\x1b]0;x\x07");
  auto* probe = in.snapshot.add_probes();
  probe->set_target(kTitle);
  probe->set_attach_name(kBadByte);
  probe->set_reason(kMarkup + kCsi);
  const HttpResponse page = make_web_view_handler([&in] { return in; })(HttpRequest{});
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  expect_printable(page.body, "web page");
  EXPECT_THAT(page.body, HasSubstr("<code>evil\\x1b]0;pwned\\x07\\x00nul</code>"));
  EXPECT_THAT(page.body, HasSubstr("<code>bad\\xff</code>"));
  EXPECT_THAT(page.body, HasSubstr("&lt;script&gt;&amp;csi\\xc2\\x9b2J"));
  EXPECT_THAT(page.body, HasSubstr("<title>hucprof — 6.1\\x1b]0;x\\x07</title>"));
  EXPECT_THAT(page.body, Not(HasSubstr("<script")));
}

}  // namespace
}  // namespace hucprof
