// The bench suite's record of the machine: hardware and software facts, and its state before and after
// the run (load, CPU time other processes took, GPU clocks, temperature, power and other processes on the
// GPU through NVML, loaded at run time so that neither the build nor a CPU-only machine needs it).
#include "miniapp/bench/suite.hpp"

#if BLOCKRES_HAVE_CUDA
#include "miniapp/bench/suite_cuda.hpp"
#endif

#include <dlfcn.h>
#include <fmt/format.h>
#include <omp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace blockres::suite {

namespace {

std::string cpu_model()
{
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown";
}

double meminfo_gib(const std::string& key)
{
  std::ifstream f("/proc/meminfo");
  std::string k;
  double kb = 0;
  std::string unit;
  while (f >> k >> kb >> unit)
    if (k == key + ":") return kb / 1048576.0;
  return 0.0;
}

// Jiffies of all CPUs busy (user + nice + system + irq + softirq + steal) and of this process (utime + stime).
struct Jiffies {
  long long busy = 0, own = 0;
};
Jiffies jiffies()
{
  Jiffies j;
  std::ifstream f("/proc/stat");
  std::string cpu;
  long long v[8] = {};
  if (f >> cpu >> v[0] >> v[1] >> v[2] >> v[3] >> v[4] >> v[5] >> v[6] >> v[7])
    j.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  std::ifstream s("/proc/self/stat");
  std::string all((std::istreambuf_iterator<char>(s)), {});
  const auto close = all.rfind(')');
  if (close != std::string::npos) {
    std::istringstream in(all.substr(close + 2));
    std::string field;
    long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {
      if (i == 14) utime = std::atoll(field.c_str());
      if (i == 15) stime = std::atoll(field.c_str());
    }
    j.own = utime + stime;
  }
  return j;
}

// ---- NVML, loaded at run time (declarations of the few stable entry points used) -------------------
struct Nvml {
  using Device = void*;
  struct Utilization {
    unsigned gpu, memory;
  };
  struct ProcessInfo {  // nvmlProcessInfo_v2_t (the _v2 and _v3 queries)
    unsigned pid;
    unsigned long long used_memory;
    unsigned gpu_instance, compute_instance;
  };
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*by_pci)(const char*, Device*) = nullptr;
  int (*by_index)(unsigned, Device*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*temperature)(Device, int, unsigned*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  int (*utilization)(Device, Utilization*) = nullptr;
  int (*processes)(Device, unsigned*, ProcessInfo*) = nullptr;
  std::string why;
  Nvml()
  {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "NVML (libnvidia-ml.so.1) not found";
      return;
    }
    auto sym = [&](const char* a, const char* b = nullptr) {
      void* p = dlsym(lib, a);
      return p || !b ? p : dlsym(lib, b);
    };
    init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2", "nvmlInit"));
    by_pci = reinterpret_cast<int (*)(const char*, Device*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    by_index = reinterpret_cast<int (*)(unsigned, Device*)>(sym("nvmlDeviceGetHandleByIndex_v2"));
    clock = reinterpret_cast<int (*)(Device, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
    temperature = reinterpret_cast<int (*)(Device, int, unsigned*)>(sym("nvmlDeviceGetTemperature"));
    power = reinterpret_cast<int (*)(Device, unsigned*)>(sym("nvmlDeviceGetPowerUsage"));
    utilization = reinterpret_cast<int (*)(Device, Utilization*)>(sym("nvmlDeviceGetUtilizationRates"));
    processes = reinterpret_cast<int (*)(Device, unsigned*, ProcessInfo*)>(
        sym("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"));
    if (!init || init() != 0) why = "NVML did not initialise";
  }
  ~Nvml()
  {
    if (lib) dlclose(lib);  // nvmlShutdown is left out on purpose: other users of NVML in the process keep theirs
  }
  bool ok() const { return lib && why.empty(); }
};

Json gpu_state(const Json& facts)
{
  static Nvml nvml;
  if (!nvml.ok()) return {{"available", false}, {"why", nvml.why}};
  Nvml::Device d = nullptr;
  const std::string bus = facts.value("pci_bus_id", std::string());
  int rc = -1;
  if (!bus.empty() && nvml.by_pci) rc = nvml.by_pci(bus.c_str(), &d);
  if (rc != 0 && nvml.by_index) rc = nvml.by_index(0, &d);
  if (rc != 0) return {{"available", false}, {"why", "NVML has no handle for the device"}};
  Json s = {{"available", true}};
  unsigned v = 0;
  if (nvml.clock && nvml.clock(d, 1, &v) == 0) s["sm_clock_mhz"] = v;      // NVML_CLOCK_SM
  if (nvml.clock && nvml.clock(d, 2, &v) == 0) s["memory_clock_mhz"] = v;  // NVML_CLOCK_MEM
  if (nvml.temperature && nvml.temperature(d, 0, &v) == 0) s["temperature_c"] = v;
  if (nvml.power && nvml.power(d, &v) == 0) s["power_w"] = v / 1000.0;
  Nvml::Utilization u{};
  if (nvml.utilization && nvml.utilization(d, &u) == 0) s["utilization_percent"] = u.gpu;
  if (nvml.processes) {
    unsigned count = 64;
    std::vector<Nvml::ProcessInfo> info(count);
    if (nvml.processes(d, &count, info.data()) == 0) {
      Json others = Json::array();
      for (unsigned k = 0; k < count; ++k)
        if (info[k].pid != static_cast<unsigned>(::getpid()))
          others.push_back({{"pid", info[k].pid}, {"used_mib", double(info[k].used_memory) / 1048576.0}});
      s["other_processes"] = others;
    }
  }
  return s;
}

}  // namespace

Json hardware_json(const ExecPtr& e)
{
  utsname u{};
  uname(&u);
  Json hw = {{"cpu",
              {{"model", cpu_model()},
               {"logical_cpus", static_cast<int>(std::thread::hardware_concurrency())},
               {"available_cpus", omp_get_num_procs()},
               {"memory_gib", meminfo_gib("MemTotal")}}},
             {"os", fmt::format("{} {} {}", u.sysname, u.release, u.machine)},
             {"gpu", nullptr}};
#if BLOCKRES_HAVE_CUDA
  if (e->is_cuda()) hw["gpu"] = cuda::device_facts(e);
#else
  (void)e;
#endif
  return hw;
}

Json machine_state_json(const ExecPtr& e)
{
  // CPU time other processes took over a 0.5 s window in which this one is idle.
  const Jiffies a = jiffies();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const Jiffies b = jiffies();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double hz = double(sysconf(_SC_CLK_TCK));
  const double others = std::max(0.0, double((b.busy - a.busy) - (b.own - a.own)) / hz / secs);
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = -1;
  const char* omp_env = std::getenv("OMP_NUM_THREADS");
  Json s = {{"time", iso_time_now()},
            {"load_average", {load[0], load[1], load[2]}},
            {"other_cpu_busy", others},
            {"other_cpu_busy_meaning", "CPUs' worth of time other processes used in a 0.5 s sample"},
            {"threads", omp_get_max_threads()},
            {"threads_why", omp_env ? fmt::format("OMP_NUM_THREADS={} (or --threads)", omp_env)
                                    : fmt::format("OpenMP's default or --threads: {} of {} available CPUs",
                                                  omp_get_max_threads(), omp_get_num_procs())},
            {"memory_available_gib", meminfo_gib("MemAvailable")},
            {"gpu", nullptr}};
#if BLOCKRES_HAVE_CUDA
  if (e->is_cuda()) s["gpu"] = gpu_state(cuda::device_facts(e));
#else
  (void)e;
#endif
  return s;
}

std::vector<std::string> busy_reasons(const Json& state, int own_threads)
{
  std::vector<std::string> r;
  const double others = state.value("other_cpu_busy", 0.0);
  // Other processes taking more than half a CPU (or a quarter of the CPUs the run does not use).
  const int cpus = omp_get_num_procs();
  const double allowed = std::max(0.5, 0.25 * std::max(0, cpus - own_threads));
  if (others > allowed)
    r.push_back(fmt::format("other processes used {:.2f} CPUs in the 0.5 s sample (allowed {:.2f})", others, allowed));
  if (state.contains("gpu") && state["gpu"].is_object() && state["gpu"].contains("other_processes") &&
      !state["gpu"]["other_processes"].empty())
    r.push_back(fmt::format("{} other process(es) on the GPU", state["gpu"]["other_processes"].size()));
  return r;
}

}  // namespace blockres::suite
