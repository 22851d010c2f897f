// ggml-alloc's rules, replayed on hand-made graphs (ggml/src/ggml-alloc.c): leafs first, best fit
// over the free blocks, in-place reuse, views keeping their source alive, outputs never freed.
#include <gtest/gtest.h>

#include "vramplan/memory/llamacpp.hpp"

namespace vramplan {
namespace {

namespace lc = llamacpp;

TEST(LlamacppGallocr, InPlaceOpReusesItsOnlySource) {
  lc::ComputeGraph g;
  const int in = g.input("in", 64);               // [0, 64)
  const int a = g.op("a", 128, {in});             // [64, 192); "in" freed after a -> hole [0, 64)
  const int b = g.op("b", 128, {a}, true);        // in place on a (one consumer, same size)
  g.op("c", 256, {b});                            // b still live: [192, 448)
  EXPECT_EQ(lc::gallocr_peak(g, 32), 448u);
}

TEST(LlamacppGallocr, NoInPlaceWhenTheSourceHasTwoConsumers) {
  lc::ComputeGraph g;
  const int a = g.input("a", 128);                // [0, 128)
  const int b = g.op("b", 128, {a}, true);        // a is read again by c: b gets [128, 256)
  g.op("c", 128, {a, b}, true);                   // c is a's last consumer: c takes a's memory
  EXPECT_EQ(lc::gallocr_peak(g, 32), 256u);       // 128 had b been done in place
}

TEST(LlamacppGallocr, BestFitTakesTheSmallestHoleThatFits) {
  lc::ComputeGraph g;
  const int x = g.input("x", 64);                 // [0, 64)
  const int y = g.input("y", 32);                 // [64, 96)
  const int z = g.input("z", 128);                // [96, 224)
  const int w = g.input("w", 32);                 // [224, 256)
  const int a = g.op("a", 32, {x, z});            // [256, 288); frees x -> [0, 64), z -> [96, 224)
  // 64 B fit both holes; the smaller one ([0, 64)) is taken, so 128 B still fit [96, 224).
  const int b = g.op("b", 64, {a, y, w});
  g.op("c", 128, {b});
  EXPECT_EQ(lc::gallocr_peak(g, 32), 288u);
}

TEST(LlamacppGallocr, ViewKeepsItsSourceAliveAndTakesNoMemory) {
  lc::ComputeGraph g;
  const int a = g.input("a", 96);                 // [0, 96)
  const int v = g.view("v", a);                   // no memory; a lives while v is read
  const int b = g.op("b", 96, {v}, true);         // in place through a view is never done: [96, 192)
  const int c = g.op("c", 64, {b});               // a freed after b: c takes [0, 64)
  g.mark_output(g.op("d", 64, {c}));              // b freed: [64, ...) merged; d at [64, 128)
  EXPECT_EQ(lc::gallocr_peak(g, 32), 192u);
}

TEST(LlamacppGallocr, AlignmentRoundsEveryTensor) {
  lc::ComputeGraph g;
  const int a = g.input("a", 1);
  g.op("b", 1, {a});
  EXPECT_EQ(lc::gallocr_peak(g, 32), 64u);        // two 1-byte tensors in 32-byte slots
  EXPECT_EQ(lc::gallocr_peak(g, 128), 256u);
}

}  // namespace
}  // namespace vramplan
