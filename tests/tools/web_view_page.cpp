// The answer of hucprof's GET / (export/views/web_view.h's handler) for a profile file, without
// BPF or root, for test_flame_graph_browser.py to check with Python's parsers and Chromium:
//   huc_web_view_page PROFILE.pb.gz > page
// prints "Content-Type: ..." and an empty line, then the page. The profile (read as `report`
// reads it) is the page's window; its kernel release also names the snapshot's kernel, and its
// first frame's name a probe target, so names of every table come from the file.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "export/pprof/pprof_reader.h"
#include "export/views/web_view.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s PROFILE.pb.gz\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto read = hucprof::read_pprof(bytes.str());
  if (!read.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], read.error().text.c_str());
    return 2;
  }
  hucprof::WebViewInput input;
  input.window = std::move(read).value();
  input.mode = "sample";
  input.reload = false;
  input.snapshot.mutable_build()->set_kernel(input.window.kernel);
  for (const auto& sample : input.window.samples) {
    if (!sample.stack || sample.stack->empty()) continue;
    auto* probe = input.snapshot.add_probes();
    probe->set_target(sample.stack->back()->function);
    probe->set_reason("reason naming " + sample.labels->callsite);
    break;
  }
  const hucprof::HttpResponse page =
      hucprof::make_web_view_handler([&input] { return input; })(hucprof::HttpRequest{});
  std::printf("Content-Type: %s\n\n", page.content_type.c_str());
  std::fwrite(page.body.data(), 1, page.body.size(), stdout);
  return page.status == 200 ? 0 : 1;
}
