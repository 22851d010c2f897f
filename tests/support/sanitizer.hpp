// Whether this test binary is instrumented by AddressSanitizer: GCC defines __SANITIZE_ADDRESS__,
// clang (the sanitizer + fuzz build, tools/configure-sanitized.sh) reports it through
// __has_feature. Tests that only re-derive a fitted constant by simulating its records hundreds of
// times skip there: the Release suite checks the same numbers and CI runs both. So do the accuracy
// tests that only compare figures when another test in the same suite runs the same code over the
// same records under ASan (SimAccuracy.EveryRecordRunsToCompletion, TrainAccuracy.FrameworkRecords*):
// each re-simulates every record in its own process, 25-115 s apiece there.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define VRAMPLAN_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VRAMPLAN_UNDER_ASAN 1
#endif
#endif
#ifndef VRAMPLAN_UNDER_ASAN
#define VRAMPLAN_UNDER_ASAN 0
#endif

#if VRAMPLAN_UNDER_ASAN
#define VRAMPLAN_SKIP_REFIT_UNDER_ASAN() GTEST_SKIP() << "re-fit checked by the Release suite"
#define VRAMPLAN_SKIP_FIGURES_UNDER_ASAN() GTEST_SKIP() << "figures checked by the Release suite"
#else
#define VRAMPLAN_SKIP_FIGURES_UNDER_ASAN() (void)0
#define VRAMPLAN_SKIP_REFIT_UNDER_ASAN() (void)0
#endif
