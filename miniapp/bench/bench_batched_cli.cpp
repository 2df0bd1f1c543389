// `blockres bench batched`: its options (BatchedBenchOptions) and its action (run_batched_bench).
#include "miniapp/bench/bench_cli.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <stdexcept>
#include <string>

namespace blockres {

Subcommand register_bench_batched(CLI::App& bench, CommandContext& context)
{
  auto o = std::make_shared<BatchedBenchOptions>();
  auto* section = bench.add_subcommand(
      "batched",
      "batched Gauss-Huard, Gauss-Jordan and LU against cuBLAS getrf/getrs/matinvBatched; block-Jacobi preconditioner "
      "setup, apply and BiCGSTAB iterations on simulator Jacobians");
  add_bench_common_options(*section, context, *o);
  add_jacobian_option(*section, o->jacobians,
                      "Jacobian file from 'blockres run DECK --write-jacobian FILE' for the block-Jacobi section "
                      "(repeatable; none: the section is skipped)");
  section
      ->add_option("--sizes", o->sizes,
                   "block sizes (1..512; Gauss-Huard, Gauss-Jordan and LU up to 32, LU only above; default 1..32, "
                   "48, 64, 128, 256, 512)")
      ->delimiter(',')
      ->check(CLI::Range(1, 512));
  section
      ->add_option_function<std::string>(
          "--mixed",
          [o](const std::string& v) {
            if (v == "none") {
              o->mixed_lo = o->mixed_hi = 0;
              return;
            }
            const auto dots = v.find("..");
            o->mixed_lo = std::stoi(v.substr(0, dots));
            o->mixed_hi = std::stoi(v.substr(dots + 2));
          },
          "a batch of mixed block sizes drawn uniformly from LO..HI (1 <= LO < HI <= 512; above 32 LU only), run "
          "after the uniform sizes and compared with the uniform batch of its mean size; 'none' skips it (default "
          "9..32)")
      ->check([](const std::string& v) -> std::string {
        if (v == "none") return {};
        const auto dots = v.find("..");
        int lo = 0, hi = 0;
        try {
          std::size_t a = 0, b = 0;
          if (dots == std::string::npos) throw std::invalid_argument("no ..");
          lo = std::stoi(v.substr(0, dots), &a);
          hi = std::stoi(v.substr(dots + 2), &b);
          if (a != dots || b != v.size() - dots - 2) throw std::invalid_argument("trailing text");
        } catch (const std::exception&) {
          return "expected LO..HI (e.g. 9..32) or none, got '" + v + "'";
        }
        if (lo < 1 || hi > 512 || lo >= hi) return "expected 1 <= LO < HI <= 512, got '" + v + "'";
        return {};
      });
  section
      ->add_option_function<std::string>(
          "--mixed-classes", [o](const std::string& v) { o->mixed_classes = v == "on"; },
          "on: the mixed batch's kernels launch one size class at a time on its own blocks, as block-Jacobi's "
          "agglomerated blocks do (default); off: one launch over the whole batch per class, for comparison")
      ->check(CLI::IsMember({"on", "off"}));
  section->add_option("--batch-gb", o->batch_gb, "cap on the bytes of the blocks of one batch, in GB")
      ->check(CLI::Range(0.0001, 32.0))
      ->capture_default_str();
  section->add_option("--max-blocks", o->max_blocks, "cap on the blocks of one batch")
      ->check(CLI::Range(1LL, 1LL << 28))
      ->capture_default_str();
  const auto only = [o](const std::string& name) {
    o->kernels_section = name != "block-jacobi";
    o->block_jacobi_section = name != "kernels";
  };
  section
      ->add_option_function<std::string>("--only", only,
                                         "run one section: 'kernels' (batched kernels vs cuBLAS, --sizes) or "
                                         "'block-jacobi' (scalar, natural and agglomerated block-Jacobi on the "
                                         "--jacobian files); default both")
      ->check(CLI::IsMember({"kernels", "block-jacobi"}));
  return {section, [o, &context] {
            o->command_line = context.command_line;
            return run_batched_bench(*o, context.log);
          }};
}

}  // namespace blockres
