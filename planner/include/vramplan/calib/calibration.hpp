// vramplan/calib/calibration.hpp — what a calibration file says about one GPU, and finding one.
//
// A calibration file (schema "vramplan.calibration/1", docs/calibration.md) is written by
// `vramplan-probe` on the card it describes: device facts, fitted figures (the numbers the
// planner uses) and the line fits with their raw points. Without a file, the planner falls back
// to default_calibration(): a few documented defaults with their sources, everything else absent,
// and origin == Defaults so every output can say "uncalibrated".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vramplan/calib/fit.hpp"
#include "vramplan/core/bytes.hpp"
#include "vramplan/io/data_root.hpp"

namespace vramplan::calib {

inline constexpr std::string_view kCalibrationSchema = "vramplan.calibration/1";

//! Facts read off the device (no timing involved).
struct DeviceFacts {
  std::string name;                 //!< cudaDeviceProp::name, e.g. "NVIDIA H200"
  std::string uuid;                 //!< "GPU-xxxxxxxx-..." (empty when not read)
  std::string pci_bus_id;           //!< "0000:19:00.0"
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::uint32_t sm_count = 0;
  Bytes total_bytes_runtime;        //!< cudaMemGetInfo total
  Bytes total_bytes_driver;         //!< cuDeviceTotalMem
  Bytes free_bytes_at_start;        //!< cudaMemGetInfo free when the probe began
  std::string driver_version;       //!< NVIDIA driver release ("580.159.03"), "unknown" without NVML
  std::string cuda_driver_version;  //!< CUDA version the driver supports ("13.0")
  std::string cuda_runtime_version; //!< CUDA runtime the probe was built with ("13.0")
  std::string mig_mode;             //!< "enabled", "disabled", "unsupported" or "unknown"
  bool ecc_enabled = false;
};

//! The figures the planner reads. In a calibration file every one is measured; in
//! default_calibration() those without a documented default are absent (nullopt / empty).
struct CalibrationFigures {
  std::optional<double> copy_bandwidth_gbps;  //!< device-to-device copy, read + write bytes, 10^9 B/s
  std::optional<double> read_bandwidth_gbps;  //!< streaming read kernel, 10^9 B/s (decode-like traffic)
  std::map<std::string, double> achieved_tflops;  //!< dtype ("bf16", "fp16", "fp8_e4m3") -> 10^12 FLOP/s
  std::optional<double> launch_overhead_us;   //!< one empty kernel launch + completion, per step
  std::optional<Bytes> context_overhead;      //!< device memory one CUDA context takes (lazy loading)
  std::optional<Bytes> context_overhead_eager;  //!< the same with CUDA_MODULE_LOADING=EAGER
  std::optional<Bytes> stream_bytes;          //!< device memory per extra stream
  std::optional<Bytes> cublas_handle_bytes;   //!< first cublasCreate (library load + handle)
  std::optional<Bytes> cublaslt_handle_bytes; //!< first cublasLtCreate
  std::optional<Bytes> cublaslt_workspace;    //!< largest workspace the heuristics asked for
  std::optional<Bytes> allocation_granularity;  //!< cudaMalloc rounds every request up to this
  std::optional<Bytes> reported_total;        //!< cudaMemGetInfo total
  std::optional<Bytes> largest_single_allocation;
  std::optional<Bytes> largest_total_allocation;
};

//! One GEMM timing point: M tokens against a fixed (N, K).
struct GemmPoint {
  std::uint64_t m = 0;
  double seconds = 0;           //!< median of repeats
  double tflops = 0;            //!< 2*M*N*K / seconds / 1e12
  std::uint64_t workspace_bytes = 0;  //!< what the cuBLASLt heuristic asked for
};

//! GEMM time vs FLOPs for one shape class (dtype, N, K), M swept: t = t0 + flops / rate.
struct GemmCurve {
  std::string dtype;
  std::string shape;  //!< e.g. "llama3-8b.qkv_proj"
  std::uint64_t n = 0;
  std::uint64_t k = 0;
  LineFit fit;
  std::vector<GemmPoint> points;
};

//! Bytes moved vs time for one bandwidth probe ("copy", "read"): t = t0 + bytes / rate.
struct BandwidthCurve {
  std::string kind;
  LineFit fit;
  std::vector<SamplePoint> points;  //!< x = bytes moved
};

//! What one deployment's start-up log stated about the memory that is not weights or KV, for one
//! model / engine profile / GPU / parallel layout (`vramplan reconcile --update-calibration`,
//! docs/reconcile.md). A plan of the same deployment takes these in place of the engine profile's
//! modelled figures (vLLM: non-torch, activation peak, CUDA graphs; SGLang: the memory free before
//! loading, CUDA graphs; TensorRT-LLM: the free memory the pool was sized from, the execution
//! context, runtime and decoder buffers), so that re-planning it reproduces the pool the log printed.
struct DeploymentFigures {
  std::string model;           //!< the model id as planned (ModelSpec id: "llama-3.1-8b-instruct")
  std::string engine;          //!< "vllm", "sglang", "trtllm"
  std::string engine_version;  //!< the profile the log was planned with ("0.19")
  std::string gpu;             //!< the GPU id as planned ("h100-sxm-80", "custom:85031714816B")
  std::uint64_t tp = 1, pp = 1;
  std::optional<Bytes> non_torch;        //!< vLLM "non-torch forward increase memory"
  std::optional<Bytes> activation_peak;  //!< vLLM "torch peak memory increase"
  std::optional<Bytes> cuda_graphs;      //!< vLLM "Graph capturing finished ... took"; SGLang "Capture cuda graph end ... mem usage"
  std::optional<Bytes> free_before_load;   //!< SGLang "Load weight begin. avail mem"
  std::optional<Bytes> free_for_kv;        //!< TensorRT-LLM "... paged kv cache: total: T, available: F" (F)
  std::optional<Bytes> execution_context;  //!< TensorRT-LLM "Allocated X MiB for execution context memory"
  std::optional<Bytes> runtime_buffers;    //!< TensorRT-LLM "Allocated X GB GPU memory for runtime buffers"
  std::optional<Bytes> decoder_buffers;    //!< TensorRT-LLM "Allocated X GB GPU memory for decoder"
  std::string source;  //!< the log and its lines ("x.log lines 5, 6, 9")
};

//! Measured: a vramplan-probe file. Deployment: a file holding only `deployment` entries (no
//! device measured), which no GPU matches in data/calibration and whose figures are all absent.
enum class CalibrationOrigin { Measured, Defaults, Deployment };

struct Calibration {
  CalibrationOrigin origin = CalibrationOrigin::Defaults;
  std::string source;        //!< the file it was read from, or where the defaults are documented
  std::string created_utc;   //!< ISO-8601, e.g. "2026-11-20T10:31:02Z" (empty for defaults)
  std::optional<DeviceFacts> device;
  CalibrationFigures figures;
  std::vector<BandwidthCurve> bandwidth;
  std::vector<GemmCurve> gemm;
  //! Everything else the probe recorded (allocation sweep, pool behaviour, skipped points),
  //! kept verbatim for readers; the planner does not interpret it.
  nlohmann::json measurements = nlohmann::json::object();
  //! Optional `deployment` section (added after vramplan.calibration/1 was first written; files
  //! without it load as before).
  std::vector<DeploymentFigures> deployment;
};

//! One `deployment` entry as the file holds it.
nlohmann::json deployment_to_json(const DeploymentFigures& d);

//! The entry of `cal` for this model / engine profile / GPU / layout; nullptr when none.
const DeploymentFigures* find_deployment(const Calibration& cal, std::string_view model, std::string_view engine,
                                         std::string_view engine_version, std::string_view gpu, std::uint64_t tp,
                                         std::uint64_t pp);

//! `cal` with `d` added, replacing an entry of the same model / engine / version / GPU / layout.
void put_deployment(Calibration& cal, DeploymentFigures d);

//! Documented defaults (docs/calibration.md, each with its source) for a GPU of compute
//! capability `cc_major`: cuBLASLt workspace 32 MiB on 9.x and newer, 4 MiB before; allocation
//! granularity 2 MiB; CUDA context 426 MiB. Bandwidth, TFLOPS and launch overhead stay absent:
//! the planner then uses datasheet peaks and must say so.
Calibration default_calibration(int cc_major);

//! Reads and validates a calibration file. Errors are Error(Io) or Error(InputFile) naming the
//! file and the JSON pointer of the bad field.
Calibration load_calibration(const std::filesystem::path& path);
//! Parses an already-read document; `origin` names it in error messages.
Calibration calibration_from_json(const nlohmann::json& doc, const std::string& origin);
//! The file form of a measured calibration (inverse of calibration_from_json).
nlohmann::json calibration_to_json(const Calibration& cal);
//! Writes calibration_to_json(cal) to `path` (pretty, trailing newline). Throws Error(Io).
void write_calibration(const Calibration& cal, const std::filesystem::path& path);

//! The key a GPU name matches on: lower case, runs of other characters turned into one '-',
//! a leading "nvidia-" dropped. "NVIDIA H200" -> "h200"; "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3".
std::string gpu_key(std::string_view name);

//! The calibration in `<data_root>/data/calibration/*.json` whose device matches `gpu_id` (a
//! name or catalogue id compared through gpu_key, or a UUID exactly); the newest (created_utc)
//! when several do. nullopt when none does or the folder is absent. A malformed file there is an
//! error, not skipped: a silently ignored calibration would be a silent guess.
std::optional<Calibration> find_calibration(const DataRoot& data_root, std::string_view gpu_id);

//! The file name the probe gives a calibration: "<gpu_key>-<driver>-cuda<version>.json",
//! e.g. "h200-580.159.03-cuda13.0.json".
std::string calibration_file_name(const DeviceFacts& device);

}  // namespace vramplan::calib
