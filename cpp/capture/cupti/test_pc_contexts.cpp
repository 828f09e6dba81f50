// PC sampling's CUPTI protocol without a GPU: the real lifecycle code (pc_contexts.cpp and
// pc_sampling.cpp) driven through a stand-in for libcupti's PC-sampling entry points. The
// stand-in keeps what libcupti keeps per context (enabled or not, the configured buffer),
// writes into the buffers it is handed as libcupti does (numStallReasons entries per PC, up to
// collectNumPcs PCs; the configured buffer at Disable and at a context's teardown), and stops
// the test process at the first breach of cupti_pcsampling.h's contract it sees.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "capture/settings.hpp"
#include "pc_contexts.hpp"
#include "pc_sampling.hpp"
#include "tests/fake_capture_context.hpp"

namespace rocprof::cupti::pc {
namespace {

using rocprof::testing::FakeCaptureContext;

// ---- the stand-in ---------------------------------------------------------------------------
namespace standin {

constexpr size_t kReasons = 5;

struct Ctx {
  bool enabled = false;
  CUpti_PCSamplingData* configured = nullptr;
  int enables = 0, disables = 0, fetches = 0;
  size_t pending = 0;  // PCs it holds for the next GetData
};

std::map<CUcontext, Ctx> g_ctx;
CUptiResult g_fail_config = CUPTI_SUCCESS, g_fail_disable = CUPTI_SUCCESS,
            g_fail_get_data = CUPTI_SUCCESS;
// When the stand-in sets up its own exit-time teardown, as libcupti may: at the Enable, or when
// the first samples are decoded.
bool g_teardown_at_enable = false, g_teardown_at_first_data = false;
bool g_torn_down = false;

[[noreturn]] void breach(const char* what) {
  std::fprintf(stderr, "CUPTI stand-in: contract broken: %s\n", what);
  std::fflush(stderr);
  _exit(3);
}

// Writes `n` PCs into `d` as libcupti does: every PC with all its stall reasons. The arrays
// the caller gave must each hold kReasons entries, none overlapping another.
void fill(CUpti_PCSamplingData* d, size_t n) {
  if (d == nullptr || d->size < sizeof(CUpti_PCSamplingData) || d->pPcData == nullptr)
    breach("a PC-sampling buffer without its size or PC array");
  std::vector<std::pair<const char*, const char*>> spans;
  for (size_t i = 0; i < d->collectNumPcs; ++i) {
    const CUpti_PCSamplingPCData& pc = d->pPcData[i];
    if (pc.stallReason == nullptr) breach("a PC without its stall-reason array");
    const auto* lo = reinterpret_cast<const char*>(pc.stallReason);
    spans.emplace_back(lo, lo + kReasons * sizeof(CUpti_PCSamplingStallReason));
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second)
      breach("stall-reason arrays smaller than numStallReasons (they overlap)");
  static char name[] = "_Z8hot_loopPfi";
  const size_t put = std::min(n, d->collectNumPcs);
  for (size_t i = 0; i < put; ++i) {
    CUpti_PCSamplingPCData& pc = d->pPcData[i];
    pc.cubinCrc = 0xc0ffee;
    pc.pcOffset = 16 * i;
    pc.functionName = name;
    pc.stallReasonCount = kReasons;
    for (size_t k = 0; k < kReasons; ++k)
      pc.stallReason[k] = {static_cast<uint32_t>(10 + k), static_cast<uint32_t>(k + 1)};
  }
  d->totalNumPcs = put;
  d->remainingNumPcs = n - put;
  d->totalSamples = put * 15;
}

Ctx& of(CUcontext ctx) { return g_ctx[ctx]; }

void check_alive(const char* call) {
  if (g_torn_down) breach(call);
}

// libcupti's teardown of a context that is still enabled (the driver destroying it at process
// exit): what it still holds goes into the configured buffer, which must still be ours.
void context_teardown(CUcontext ctx) {
  Ctx& c = of(ctx);
  if (!c.enabled || c.configured == nullptr) return;
  if (!holds_configured_buffer(c.configured))
    breach("the configured buffer was freed while PC sampling was still enabled");
  fill(c.configured, 2);
  c.enabled = false;
}

void teardown_at_exit() {
  g_torn_down = true;
  for (auto& [ctx, c] : g_ctx) context_teardown(ctx);
  // A collector thread still polling calls GetData in this window.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

CUptiResult enable(CUpti_PCSamplingEnableParams* p) {
  check_alive("Enable after CUPTI's teardown");
  Ctx& c = of(p->ctx);
  if (c.enabled) breach("Enable twice");
  c.enabled = true;
  ++c.enables;
  if (g_teardown_at_enable) std::atexit(teardown_at_exit);
  return CUPTI_SUCCESS;
}

CUptiResult disable(CUpti_PCSamplingDisableParams* p) {
  check_alive("Disable after CUPTI's teardown");
  Ctx& c = of(p->ctx);
  if (!c.enabled) breach("Disable of a context not enabled (twice, or without Enable)");
  ++c.disables;
  if (g_fail_disable != CUPTI_SUCCESS) return g_fail_disable;
  if (c.configured != nullptr) fill(c.configured, 3);
  c.enabled = false;
  c.configured = nullptr;
  return CUPTI_SUCCESS;
}

CUptiResult set_config(CUpti_PCSamplingConfigurationInfoParams* p) {
  Ctx& c = of(p->ctx);
  if (!c.enabled) breach("SetConfigurationAttribute before Enable");
  // Applied one by one, as libcupti does: the buffer is taken even when another attribute fails.
  for (size_t i = 0; i < p->numAttributes; ++i)
    if (p->pPCSamplingConfigurationInfo[i].attributeType ==
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
      c.configured = static_cast<CUpti_PCSamplingData*>(
          p->pPCSamplingConfigurationInfo[i]
              .attributeData.samplingDataBufferData.samplingDataBuffer);
  return g_fail_config;
}

CUptiResult get_config(CUpti_PCSamplingConfigurationInfoParams* p) {
  for (size_t i = 0; i < p->numAttributes; ++i)
    p->pPCSamplingConfigurationInfo[i].attributeData.samplingPeriodData.samplingPeriod = 10;
  return CUPTI_SUCCESS;
}

CUptiResult get_data(CUpti_PCSamplingGetDataParams* p) {
  check_alive("GetData after CUPTI's teardown");
  Ctx& c = of(p->ctx);
  if (!c.enabled) breach("GetData on a context not enabled");
  ++c.fetches;
  if (g_fail_get_data != CUPTI_SUCCESS) return g_fail_get_data;
  auto* d = static_cast<CUpti_PCSamplingData*>(p->pcSamplingData);
  fill(d, c.pending);
  c.pending = d->remainingNumPcs;
  if (g_teardown_at_first_data && d->totalNumPcs > 0) {
    g_teardown_at_first_data = false;
    std::atexit(teardown_at_exit);
  }
  return CUPTI_SUCCESS;
}

CUptiResult num_reasons(CUpti_PCSamplingGetNumStallReasonsParams* p) {
  if (!of(p->ctx).enabled) breach("GetNumStallReasons before Enable");
  *p->numStallReasons = kReasons;
  return CUPTI_SUCCESS;
}

CUptiResult reasons(CUpti_PCSamplingGetStallReasonsParams* p) {
  if (p->numStallReasons != kReasons) breach("GetStallReasons with another count");
  for (size_t i = 0; i < kReasons; ++i) {
    p->stallReasonIndex[i] = static_cast<uint32_t>(10 + i);
    std::snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE,
                  "smsp__pcsamp_warps_issue_stalled_r%zu", i);
  }
  return CUPTI_SUCCESS;
}

CUptiResult no_line(CUpti_GetSassToSourceCorrelationParams*) { return CUPTI_ERROR_UNKNOWN; }
CUptiResult crc(CUpti_GetCubinCrcParams* p) {
  p->cubinCrc = 0xc0ffee;
  return CUPTI_SUCCESS;
}
CUptiResult device_id(CUcontext, uint32_t* d) {
  *d = 0;
  return CUPTI_SUCCESS;
}

PcApi api() {
  PcApi a;
  a.cuptiPCSamplingEnable = enable;
  a.cuptiPCSamplingDisable = disable;
  a.cuptiPCSamplingSetConfigurationAttribute = set_config;
  a.cuptiPCSamplingGetConfigurationAttribute = get_config;
  a.cuptiPCSamplingGetData = get_data;
  a.cuptiPCSamplingGetNumStallReasons = num_reasons;
  a.cuptiPCSamplingGetStallReasons = reasons;
  a.cuptiGetSassToSourceCorrelation = no_line;
  a.cuptiGetCubinCrc = crc;
  a.cuptiGetDeviceId = device_id;
  return a;
}

void reset() {
  g_ctx.clear();
  g_fail_config = g_fail_disable = g_fail_get_data = CUPTI_SUCCESS;
  g_teardown_at_enable = g_teardown_at_first_data = false;
  g_torn_down = false;
}

}  // namespace standin

CUcontext context(uintptr_t n) { return reinterpret_cast<CUcontext>(n); }

PcSamplingSettings settings(uint32_t poll_ms = 100000) {
  PcSamplingSettings s;
  s.enabled = true;
  s.poll_ms = poll_ms;  // long: the tests fetch through the lifecycle calls, not the timer
  return s;
}

class PcSamplingLifecycle : public ::testing::Test {
 protected:
  void SetUp() override { standin::reset(); }
  void TearDown() override { standin::reset(); }
};

// ---- the per-context protocol ---------------------------------------------------------------

TEST_F(PcSamplingLifecycle, EveryPcHasRoomForEveryStallReason) {
  ContextState st;
  Failure f;
  ASSERT_TRUE(enable(standin::api(), context(1), 0, st, &f)) << f.call;
  EXPECT_EQ(st.num_stall_reasons, standin::kReasons);
  EXPECT_EQ(st.fetch.reasons_per_pc(), standin::kReasons);
  standin::of(context(1)).pending = kPcsPerFetch + 100;  // two rounds
  size_t pcs = 0, rounds = 0;
  ASSERT_TRUE(fetch(
      standin::api(), st,
      [&](const CUpti_PCSamplingData& d) {
        ++rounds;
        pcs += d.totalNumPcs;
        for (size_t i = 0; i < d.totalNumPcs; ++i) EXPECT_EQ(d.pPcData[i].stallReasonCount, 5u);
      },
      &f));
  EXPECT_EQ(rounds, 2u);
  EXPECT_EQ(pcs, kPcsPerFetch + 100);
  // Disable hands back what CUPTI held, through the configured buffer.
  size_t at_disable = 0;
  ASSERT_TRUE(disable(
      standin::api(), st, [&](const CUpti_PCSamplingData& d) { at_disable += d.totalNumPcs; }, &f));
  EXPECT_EQ(at_disable, 3u);
  EXPECT_FALSE(cupti_holds(st));
  EXPECT_TRUE(disable(standin::api(), st, [](const CUpti_PCSamplingData&) {}, &f));  // once only
  EXPECT_EQ(standin::of(context(1)).disables, 1);
}

TEST_F(PcSamplingLifecycle, AFailedConfigurationDisablesTheContext) {
  standin::g_fail_config = CUPTI_ERROR_INVALID_PARAMETER;
  FakeCaptureContext c;
  std::string why;
  ASSERT_TRUE(start_with(c, settings(), standin::api(), &why)) << why;
  on_context_created(context(2));
  // Enabled, configured (the buffer taken), then the failure: Disable follows at once.
  EXPECT_EQ(standin::of(context(2)).disables, 1);
  EXPECT_FALSE(standin::of(context(2)).enabled);
  stop(c);
  EXPECT_EQ(standin::of(context(2)).disables, 1);
}

TEST_F(PcSamplingLifecycle, AFailedGetDataStillEndsInOneDisable) {
  FakeCaptureContext c;
  std::string why;
  ASSERT_TRUE(start_with(c, settings(), standin::api(), &why)) << why;
  on_context_created(context(3));
  standin::g_fail_get_data = CUPTI_ERROR_UNKNOWN;
  on_context_destroy(context(3));  // its last GetData fails; the Disable comes all the same
  EXPECT_EQ(standin::of(context(3)).disables, 1);
  EXPECT_FALSE(standin::of(context(3)).enabled);
  stop(c);
  EXPECT_EQ(standin::of(context(3)).disables, 1);
  bool said = false;
  for (const MetadataInfo& m : c.rows<MetadataInfo>())
    if (m.tag == "rocprof.pc_sampling.status") said = m.value.find("GetData") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(PcSamplingLifecycle, ABufferCuptiStillHoldsIsNeverFreed) {
  standin::g_fail_disable = CUPTI_ERROR_UNKNOWN;
  FakeCaptureContext c;
  std::string why;
  ASSERT_TRUE(start_with(c, settings(), standin::api(), &why)) << why;
  on_context_created(context(4));
  CUpti_PCSamplingData* configured = standin::of(context(4)).configured;
  ASSERT_NE(configured, nullptr);
  stop(c);  // its Disable fails: CUPTI keeps writing into the configured buffer
  EXPECT_TRUE(standin::of(context(4)).enabled);
  EXPECT_TRUE(holds_configured_buffer(configured));
  standin::context_teardown(context(4));  // the driver's teardown at exit writes into it
}

// ---- process exit ---------------------------------------------------------------------------

FakeCaptureContext* g_exit_ctx = nullptr;
void session_stop_at_exit() { stop(*g_exit_ctx); }

// A native program under the CUDA injection: the session's exit handler is registered when the
// driver loads the injection library, before any context exists; CUPTI sets up its teardown
// later, at the Enable. Exit handlers run last-in first-out, so CUPTI's teardown runs before
// the session's stop: no PC-sampling call may come after it, neither from the collector thread
// nor from the stop.
void exit_while_sampling(bool teardown_at_enable) {
  standin::reset();
  standin::g_teardown_at_enable = teardown_at_enable;
  standin::g_teardown_at_first_data = !teardown_at_enable;
  static FakeCaptureContext c;
  g_exit_ctx = &c;
  std::atexit(session_stop_at_exit);
  std::string why;
  if (!start_with(c, settings(/*poll_ms=*/1), standin::api(), &why)) _exit(4);
  on_context_created(context(5));
  standin::of(context(5)).pending = 40;
  // The collector's first fetch (an event, waited for; no timing is measured).
  for (int i = 0; i < 10000 && standin::of(context(5)).fetches == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::exit(0);
}

TEST(PcSamplingAtExit, NoCuptiCallAfterATeardownSetUpAtTheEnable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_while_sampling(true), ::testing::ExitedWithCode(0), "");
}

TEST(PcSamplingAtExit, NoCuptiCallAfterATeardownSetUpAtTheFirstSamples) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_while_sampling(false), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace rocprof::cupti::pc
