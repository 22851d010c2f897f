// general.file_type ids -> names: the llama_ftype enum of llama.cpp include/llama.h
// (https://github.com/ggml-org/llama.cpp/blob/master/include/llama.h), named as llama-quantize
// names them (LLAMA_FTYPE_MOSTLY_Q4_K_M -> "Q4_K_M", LLAMA_FTYPE_ALL_F32 -> "F32"). Ids whose
// support was removed stay in the table: old files still carry them.
#include <array>
#include <utility>

#include "vramplan/io/gguf.hpp"

namespace vramplan {
namespace {

constexpr std::array<std::pair<std::uint32_t, std::string_view>, 41> kFtypeNames{{
    {0, "F32"},       {1, "F16"},        {2, "Q4_0"},      {3, "Q4_1"},
    {4, "Q4_1_SOME_F16"},                {5, "Q4_2"},      {6, "Q4_3"},  // 5, 6: removed
    {7, "Q8_0"},      {8, "Q5_0"},       {9, "Q5_1"},      {10, "Q2_K"},
    {11, "Q3_K_S"},   {12, "Q3_K_M"},    {13, "Q3_K_L"},   {14, "Q4_K_S"},
    {15, "Q4_K_M"},   {16, "Q5_K_S"},    {17, "Q5_K_M"},   {18, "Q6_K"},
    {19, "IQ2_XXS"},  {20, "IQ2_XS"},    {21, "Q2_K_S"},   {22, "IQ3_XS"},
    {23, "IQ3_XXS"},  {24, "IQ1_S"},     {25, "IQ4_NL"},   {26, "IQ3_S"},
    {27, "IQ3_M"},    {28, "IQ2_S"},     {29, "IQ2_M"},    {30, "IQ4_XS"},
    {31, "IQ1_M"},    {32, "BF16"},
    {33, "Q4_0_4_4"}, {34, "Q4_0_4_8"},  {35, "Q4_0_8_8"},  // removed: runtime repacking
    {36, "TQ1_0"},    {37, "TQ2_0"},     {38, "MXFP4_MOE"}, {39, "NVFP4"},
    {40, "Q1_0"},
}};

}  // namespace

std::optional<std::string_view> llama_ftype_name(std::uint32_t ftype) {
  for (const auto& [id, name] : kFtypeNames)
    if (id == ftype) return name;
  return std::nullopt;
}

}  // namespace vramplan
