// gguf_split_writer.hpp — a GGUF description cut into the files llama.cpp's gguf-split writes.
#pragma once

#include <cstddef>
#include <vector>

#include "support/gguf_writer.hpp"

namespace vramplan::test {

//! `whole` cut as gguf-split cuts it (tools/gguf-split/gguf-split.cpp split_strategy): split k
//! (0-based) holds the tensors from first_tensor[k] up to the next cut; the first split keeps
//! every key/value, the others only the split keys; every split gets split.no and split.count
//! (u16) and split.tensors.count (i32).
std::vector<GgufDesc> split_gguf(const GgufDesc& whole, const std::vector<std::size_t>& first_tensor);

}  // namespace vramplan::test
