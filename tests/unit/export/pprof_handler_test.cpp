// GET /debug/pprof/usercopy as a plain function: cumulative, ?seconds=N windows, bad N.
#include "export/views/pprof_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/profile/shown_windows.h"
#include "core/symbols/stack_interner.h"
#include "export/pprof/pprof_reader.h"

namespace hucprof {
namespace {

using ::testing::HasSubstr;

// A store stand-in: every drain adds 10 samples to one stack and 100 kernel samples, one
// second later than the previous drain.
class FakeSource {
 public:
  FakeSource() {
    ProfileStack s{interner_.frame({"__check_object_size", "", 0, 0}),
                   interner_.frame({"udp_recvmsg", "", 0, 0})};
    stack_ = interner_.stack(s);
  }
  ProfileSource source() {
    return {[this] { return cumulative(); }, [this] { ++drains_; }, {}, {}, {}};
  }
  StackProfile cumulative() const {
    StackProfile p;
    p.sampling = true;
    p.sample_period_ns = 1000;
    p.time_unix_ns = 0;
    p.duration_ns = drains_ * 1'000'000'000LL;
    ProfileSample s{stack_, labels_, {}};
    s.values[kSamples] = 10 * drains_;
    p.samples = {s};
    p.sampled_by_context = {{"kernel", 100 * static_cast<uint64_t>(drains_)}};
    return p;
  }
  std::atomic<int> drains_{3};

 private:
  StackInterner interner_;
  StackPtr stack_;
  LabelsPtr labels_ = make_labels({"udp_recvmsg", "recvfrom", "object", ""});
};

HttpRequest get(std::multimap<std::string, std::string> query = {}) {
  HttpRequest r;
  r.method = "GET";
  r.path = "/debug/pprof/usercopy";
  r.query = std::move(query);
  return r;
}

StackProfile body_profile(const HttpResponse& r) {
  auto read = read_pprof(r.body);
  if (!read.ok()) {
    ADD_FAILURE() << read.error().text;
    return {};
  }
  return read.value();
}

PprofHandlerLimits no_wait(std::vector<std::chrono::milliseconds>* slept = nullptr) {
  PprofHandlerLimits limits;
  limits.sleep = [slept](std::chrono::milliseconds d) {
    if (slept) slept->push_back(d);
  };
  return limits;
}

TEST(PprofHandler, CumulativeProfileIsGzippedPprof) {
  FakeSource fake;
  const HttpResponse r = make_pprof_handler(fake.source(), no_wait())(get());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/octet-stream");
  ASSERT_GE(r.body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(r.body[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(r.body[1]), 0x8b);
  const StackProfile p = body_profile(r);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].values[kSamples], 30u);
  EXPECT_EQ(fake.drains_, 3) << "the cumulative profile is served as it stands";
}

TEST(PprofHandler, SecondsIsTheWindowBetweenTwoDrains) {
  FakeSource fake;
  std::vector<std::chrono::milliseconds> slept;
  const HttpResponse r =
      make_pprof_handler(fake.source(), no_wait(&slept))(get({{"seconds", "2"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(fake.drains_, 5) << "one drain when the window opens, one when it closes";
  std::chrono::milliseconds total{0};
  for (auto d : slept) total += d;
  EXPECT_EQ(total, std::chrono::seconds(2));
  EXPECT_EQ(slept.size(), 20u) << "waits in 100 ms steps, looking at `cancelled` between";
  const StackProfile p = body_profile(r);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].values[kSamples], 10u);  // drains 4 → 5
  EXPECT_EQ(p.sampled_by_context.at("kernel"), 100u);
  EXPECT_EQ(p.duration_ns, 1'000'000'000);
}

// The web view links ?window=prediction: the store's window as it stands, no drain, no wait.
TEST(PprofHandler, WindowIsThePredictionWindowAsItStands) {
  FakeSource fake;
  ProfileSource source = fake.source();
  FakeSource window_fake;
  window_fake.drains_ = 1;  // a window of one drain: 10 samples, 1 s
  source.window = [&window_fake] { return window_fake.cumulative(); };
  auto handler = make_pprof_handler(source, no_wait());
  const HttpResponse r = handler(get({{"window", "prediction"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(fake.drains_, 3) << "served as it stands";
  const StackProfile p = body_profile(r);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].values[kSamples], 10u);
  EXPECT_EQ(p.duration_ns, 1'000'000'000);
  for (const auto& query : std::vector<std::multimap<std::string, std::string>>{
           {{"window", "5m"}},
           {{"window", "prediction"}, {"window", "prediction"}},
           {{"window", "prediction"}, {"seconds", "2"}}}) {
    const HttpResponse refused = handler(get(query));
    EXPECT_EQ(refused.status, 400);
    EXPECT_THAT(refused.body, testing::StartsWith("window"));
  }
  EXPECT_EQ(make_pprof_handler(fake.source(), no_wait())(get({{"window", "prediction"}})).status,
            404)
      << "a source without a window";
}

// The web view's link names the window the page showed by its end: that window is served
// though drains moved the live one on, until it is no longer kept.
TEST(PprofHandler, EndServesTheWindowAPageShowed) {
  FakeSource fake;
  ShownWindows shown;
  FakeSource shown_fake;
  shown_fake.drains_ = 2;  // the page showed 2 drains: 20 samples, ending at 2 s
  const int64_t end = shown.remember(shown_fake.cumulative());
  EXPECT_EQ(end, 2'000'000'000);
  ProfileSource source = fake.source();
  source.window = [&fake] { return fake.cumulative(); };  // the live window: 3 drains by now
  source.shown_window = [&shown](int64_t at) { return shown.find(at); };
  auto handler = make_pprof_handler(source, no_wait());
  const HttpResponse r = handler(get({{"window", "prediction"}, {"end", "2000000000"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  const StackProfile p = body_profile(r);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].values[kSamples], 20u) << "the page's window, not the live one";
  EXPECT_EQ(p.duration_ns, 2'000'000'000);
  EXPECT_EQ(body_profile(handler(get({{"window", "prediction"}}))).samples[0].values[kSamples], 30u)
      << "without end: the window as it stands";
  // Once kKept newer windows were shown, the old one is gone, and the answer says what to do.
  for (int i = 3; i < 3 + static_cast<int>(ShownWindows::kKept); ++i) {
    shown_fake.drains_ = i;
    shown.remember(shown_fake.cumulative());
  }
  const HttpResponse gone = handler(get({{"window", "prediction"}, {"end", "2000000000"}}));
  EXPECT_EQ(gone.status, 410);
  EXPECT_THAT(gone.body, testing::StartsWith("end: the window ending at 2000000000 is no longer "
                                             "kept"));
  EXPECT_THAT(gone.body, HasSubstr("reload the page"));
  for (const auto& query : std::vector<std::multimap<std::string, std::string>>{
           {{"end", "2000000000"}},
           {{"window", "prediction"}, {"end", "0"}},
           {{"window", "prediction"}, {"end", "-5"}},
           {{"window", "prediction"}, {"end", "2e9"}},
           {{"window", "prediction"}, {"end", ""}},
           {{"window", "prediction"}, {"end", "99999999999999999999"}},
           {{"window", "prediction"}, {"end", "1"}, {"end", "1"}}}) {
    const HttpResponse refused = handler(get(query));
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_THAT(refused.body, testing::StartsWith("end: "));
    EXPECT_EQ(std::count(refused.body.begin(), refused.body.end(), '\n'), 1) << "one line";
  }
  EXPECT_EQ(make_pprof_handler(fake.source(),
                               no_wait())(get({{"window", "prediction"}, {"end", "2000000000"}}))
                .status,
            404)
      << "a source that keeps no shown windows";
}

TEST(PprofHandler, BadSecondsAre400NamingTheProblem) {
  FakeSource fake;
  auto handler = make_pprof_handler(fake.source(), no_wait());
  for (const char* bad : {"0", "601", "-1", "1.5", "ten", "", "99999999999999999999", " 5"}) {
    const HttpResponse r = handler(get({{"seconds", bad}}));
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_THAT(r.body, HasSubstr("is not a whole number of seconds from 1 to 600")) << bad;
  }
  const HttpResponse twice = handler(get({{"seconds", "1"}, {"seconds", "2"}}));
  EXPECT_EQ(twice.status, 400);
  EXPECT_THAT(twice.body, HasSubstr("seconds: given twice"));
  EXPECT_EQ(fake.drains_, 3) << "a refused request drains nothing";
}

// The value comes back in the 400 body: quoted, its control bytes as \xNN, on one line.
TEST(PprofHandler, BadSecondsAreQuotedOnOneLine) {
  FakeSource fake;
  const HttpResponse r = make_pprof_handler(fake.source(), no_wait())(get({{"seconds", "1\n2"}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "seconds: \"1\\x0a2\" is not a whole number of seconds from 1 to 600\n");
  EXPECT_EQ(profile_seconds({{"seconds", "30"}}, 600).value(), 30);
  EXPECT_EQ(profile_seconds({{"other", "x"}}, 600).value(), std::nullopt);
  EXPECT_EQ(profile_seconds({{"seconds", "601"}}, 600).error().text,
            "seconds: \"601\" is not a whole number of seconds from 1 to 600");
}

TEST(PprofHandler, CancelledRequestStopsWaiting) {
  FakeSource fake;
  int polls = 0;
  HttpRequest r = get({{"seconds", "600"}});
  r.cancelled = [&polls] { return ++polls > 3; };
  const HttpResponse response = make_pprof_handler(fake.source(), no_wait())(r);
  EXPECT_EQ(response.status, 503);
  EXPECT_LE(polls, 5);
}

HttpRequest window_of(const char* peer, const char* seconds = "1") {
  HttpRequest r = get({{"seconds", seconds}});
  r.peer = peer;
  return r;
}

// A handler whose ?seconds= windows wait until release(), at most 2 at once; waiting() counts
// the polls of the windows started with counted().
class HeldWindows {
 public:
  HeldWindows() {
    PprofHandlerLimits limits;
    limits.max_waiting = 2;
    limits.sleep = [this](std::chrono::milliseconds) {
      while (!released_) std::this_thread::yield();
    };
    handler_ = make_pprof_handler(fake_.source(), limits);
  }
  HttpResponse operator()(const HttpRequest& r) { return handler_(r); }
  HttpRequest counted(HttpRequest r) {
    r.cancelled = [this] {
      ++polls_;
      return false;
    };
    return r;
  }
  void wait_for_polls(int n) const {
    while (polls_ < n) std::this_thread::yield();
  }
  void release() { released_ = true; }

 private:
  FakeSource fake_;
  std::atomic<bool> released_{false};
  std::atomic<int> polls_{0};
  HttpHandler handler_;
};

std::string retry_after(const HttpResponse& r) {
  for (const auto& [name, value] : r.headers) {
    if (name == "Retry-After") return value;
  }
  return "";
}

TEST(PprofHandler, TooManyWaitingRequestsAre429WithRetryAfter) {
  HeldWindows handler;
  std::thread a([&] { handler(handler.counted(window_of("10.0.0.1", "600"))); });
  std::thread b([&] { handler(handler.counted(window_of("10.0.0.2", "30"))); });
  handler.wait_for_polls(2);
  const HttpResponse third = handler(window_of("10.0.0.3"));
  EXPECT_EQ(third.status, 429);
  // Retry-After: when the soonest window (30 s) closes, not the 600 s one.
  ASSERT_NE(retry_after(third), "") << "a 429 says when to come back";
  EXPECT_GE(std::stoi(retry_after(third)), 29);
  EXPECT_LE(std::stoi(retry_after(third)), 30);
  EXPECT_THAT(third.body, HasSubstr("try again in"));
  EXPECT_EQ(handler(get()).status, 200) << "the cumulative profile never waits";
  handler.release();
  a.join();
  b.join();
  EXPECT_EQ(handler(window_of("10.0.0.3")).status, 200) << "slots are given back";
}

// Two clients used to keep both windows for ten minutes; now one client holds at most one, so
// a second window of the same client is refused while other clients still get theirs.
TEST(PprofHandler, OneWindowPerClient) {
  HeldWindows handler;
  std::thread a([&] { handler(handler.counted(window_of("192.0.2.7", "600"))); });
  handler.wait_for_polls(1);
  const HttpResponse again = handler(window_of("192.0.2.7", "600"));
  EXPECT_EQ(again.status, 429);
  EXPECT_THAT(again.body, HasSubstr("one per client"));
  ASSERT_NE(retry_after(again), "");
  EXPECT_GE(std::stoi(retry_after(again)), 590);
  std::thread other([&] { EXPECT_EQ(handler(window_of("192.0.2.8")).status, 200); });
  handler.release();
  other.join();
  a.join();
}

}  // namespace
}  // namespace hucprof
