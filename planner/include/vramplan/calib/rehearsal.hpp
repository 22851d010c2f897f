// vramplan/calib/rehearsal.hpp — a fit rehearsal: the byte sizes and GEMM shapes of a plan, which
// `vramplan-probe --rehearse FILE` allocates and runs on the real card to check in seconds that
// the plan fits (schema "vramplan.rehearsal/1", docs/calibration.md#fit-rehearsal).
//
// The planner writes one with write_rehearsal() from plain sizes; the probe reads it with
// load_rehearsal(). Nothing here needs CUDA.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/core/bytes.hpp"

namespace vramplan::calib {

inline constexpr std::string_view kRehearsalSchema = "vramplan.rehearsal/1";

//! Element types a rehearsal GEMM may use (the probe's cuBLASLt dtypes).
inline constexpr std::string_view kRehearsalDtypes[] = {"bf16", "fp16", "fp8_e4m3"};

//! C[m x n] = A[m x k] * B[k x n]: B comes out of the weights, A and C out of the activation
//! workspace, exactly as a forward pass would use them.
struct RehearsalGemm {
  std::string name;   //!< e.g. "qkv_proj"
  std::string dtype;  //!< one of kRehearsalDtypes
  std::uint64_t m = 0, n = 0, k = 0;
};

struct RehearsalInput {
  std::string label;               //!< what the plan was ("llama3-8b bf16, 4 x 8192 tokens")
  Bytes weights;                   //!< all weight bytes on this GPU
  Bytes kv_block;                  //!< bytes of one KV-cache block (all layers)
  std::uint64_t kv_blocks = 0;     //!< number of KV blocks the plan reserves
  Bytes activation_workspace;      //!< activation / scratch bytes at peak
  std::vector<RehearsalGemm> gemms;
  std::optional<Bytes> predicted_peak;  //!< the planner's own peak, to compare with the card's

  //! weights + kv_block * kv_blocks + activation_workspace (checked).
  Bytes total() const;
};

//! Validates (non-zero shapes, known dtypes, sizes that add up without overflow) and converts.
//! Throws Error(Usage) naming the bad field.
nlohmann::json rehearsal_to_json(const RehearsalInput& input);
//! Parses and validates; errors are Error(InputFile) naming `origin` and the JSON pointer.
RehearsalInput rehearsal_from_json(const nlohmann::json& doc, const std::string& origin);
//! Writes rehearsal_to_json(input) to `path`. Throws Error(Usage) or Error(Io).
void write_rehearsal(const RehearsalInput& input, const std::filesystem::path& path);
RehearsalInput load_rehearsal(const std::filesystem::path& path);

//! Bytes of one element of a rehearsal dtype (2 for bf16/fp16, 1 for fp8_e4m3); throws
//! Error(Usage) for anything else.
std::uint64_t rehearsal_dtype_bytes(std::string_view dtype);

}  // namespace vramplan::calib
