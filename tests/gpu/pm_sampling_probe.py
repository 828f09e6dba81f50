"""What CUPTI's PM sampling does on this machine, through ctypes alone (no rocprof build):
which metrics a chip has for PM sampling, whether a set of them fits one pass, and on a GPU
whether Enable/SetConfig/Start/DecodeData succeed, how many samples come back at each rate, the
clock their timestamps are on, and the mean of each metric in a bf16 GEMM phase and a copy
phase (PyTorch, when present).

    python3 tests/gpu/pm_sampling_probe.py --chip GH100     # host tables only: no GPU needed
    python3 tests/gpu/pm_sampling_probe.py                  # device 0, collection too

A measuring tool, not a test: it prints facts and exits 0 unless CUPTI cannot be loaded.
"""

from __future__ import annotations

import argparse
import ctypes as C
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The names the default set is chosen from (CUPTI's PM sampling metric table and the GH100
# tables); the probe says which of them the chip has.
CANDIDATES = (
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_shared_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "dramc__read_throughput.avg.pct_of_peak_sustained_elapsed",
    "dramc__write_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__read_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__write_throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sector_hit_rate.pct",
    "lts__t_sectors_lookup_hit.sum",
    "lts__t_sectors_lookup_miss.sum",
    "pcie__read_bytes.avg.pct_of_peak_sustained_elapsed",
    "pcie__write_bytes.avg.pct_of_peak_sustained_elapsed",
    "nvlrx__bytes.avg.pct_of_peak_sustained_elapsed",
    "nvltx__bytes.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "tpc__warps_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "tpc__warps_inactive_sm_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "gr__cycles_active.sum.pct_of_peak_sustained_elapsed",
    "gpc__cycles_elapsed.avg.per_second",
    "sys__cycles_elapsed.avg.per_second",
    "dram__bytes_read.sum.per_second",
    "dram__bytes_write.sum.per_second",
    "pcie__read_bytes.sum.per_second",
    "pcie__write_bytes.sum.per_second",
    "TPC.TriageCompute.sm__pipe_tensor_op_hmma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "TPC.TriageCompute.sm__pipe_tensor_op_imma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "LTS.TriageCompute.lts__average_t_sector_hit_rate_realtime.pct",
    "LTS.TriageCompute.lts__average_t_sector_hit_rate_realtime.ratio",
    "LTS.TriageCompute.lts__average_t_sector_hit_rate_realtime",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dramc__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "fbpa__dram_read_throughput.avg.pct_of_peak_sustained_elapsed",
    "fbpa__dram_write_throughput.avg.pct_of_peak_sustained_elapsed",
)
KEYWORDS = ("tensor", "dram", "lts__t_sector", "pcie", "nvl", "warps_active", "inst_executed",
            "cycles_active")

P, SZ, VP, U8P, CCP = C.c_void_p, C.c_size_t, C.c_void_p, C.POINTER(C.c_uint8), C.c_char_p


def _struct(name, fields):
    cls = type(name, (C.Structure,), {"_fields_": [("structSize", SZ), ("pPriv", VP), *fields]})
    last = fields[-1][0] if fields else "pPriv"
    cls.SIZE = getattr(cls, last).offset + C.sizeof(dict([("pPriv", VP), *fields])[last])

    def make(**kw):
        s = cls()
        s.structSize = cls.SIZE
        for k, v in kw.items():
            setattr(s, k, v)
        return s
    cls.make = staticmethod(make)
    return cls


HostInit = _struct("HostInit", [("profilerType", C.c_int), ("pChipName", CCP),
                                ("pCounterAvailabilityImage", U8P), ("pHostObject", P)])
HostDeinit = _struct("HostDeinit", [("pHostObject", P)])
BaseMetrics = _struct("BaseMetrics", [("pHostObject", P), ("metricType", C.c_int),
                                      ("ppMetricNames", C.POINTER(CCP)), ("numMetrics", SZ)])
SubMetrics = _struct("SubMetrics", [("pHostObject", P), ("metricType", C.c_int),
                                    ("pMetricName", CCP), ("numOfSubmetrics", SZ),
                                    ("ppSubMetrics", C.POINTER(CCP))])
Props = _struct("Props", [("pHostObject", P), ("pMetricName", CCP), ("pDescription", CCP),
                          ("pHwUnit", CCP), ("pDimUnit", CCP), ("metricType", C.c_int)])
AddMetrics = _struct("AddMetrics", [("pHostObject", P), ("ppMetricNames", C.POINTER(CCP)),
                                    ("numMetrics", SZ)])
ImageSize = _struct("ImageSize", [("pHostObject", P), ("configImageSize", SZ)])
Image = _struct("Image", [("pHostObject", P), ("configImageSize", SZ), ("pConfigImage", U8P)])
Passes = _struct("Passes", [("configImageSize", SZ), ("pConfigImage", U8P), ("numOfPasses", SZ)])
Evaluate = _struct("Evaluate", [("pHostObject", P), ("pCounterDataImage", U8P),
                                ("counterDataImageSize", SZ), ("rangeIndex", SZ),
                                ("ppMetricNames", C.POINTER(CCP)), ("numMetrics", SZ),
                                ("pMetricValues", C.POINTER(C.c_double))])
ProfInit = _struct("ProfInit", [])
ChipName = _struct("ChipName", [("deviceIndex", SZ), ("pChipName", CCP)])
DevSupported = _struct("DevSupported", [("cuDevice", C.c_int), ("isSupported", C.c_int),
                                        ("architecture", C.c_int), ("sli", C.c_int),
                                        ("vGpu", C.c_int), ("confidentialCompute", C.c_int),
                                        ("cmp", C.c_int), ("wsl", C.c_int), ("api", C.c_int)])
Avail = _struct("Avail", [("deviceIndex", SZ), ("counterAvailabilityImageSize", SZ),
                          ("pCounterAvailabilityImage", U8P)])
Enable = _struct("Enable", [("deviceIndex", SZ), ("pPmSamplingObject", P)])
ObjOnly = _struct("ObjOnly", [("pPmSamplingObject", P)])
SetConfig = _struct("SetConfig", [("pPmSamplingObject", P), ("configSize", SZ),
                                  ("pConfig", U8P), ("hardwareBufferSize", SZ),
                                  ("samplingInterval", C.c_uint64), ("triggerMode", C.c_int),
                                  ("hwBufferAppendMode", C.c_int)])
DataSize = _struct("DataSize", [("pPmSamplingObject", P), ("pMetricNames", C.POINTER(CCP)),
                                ("numMetrics", SZ), ("maxSamples", C.c_uint32),
                                ("counterDataSize", SZ)])
DataInit = _struct("DataInit", [("pPmSamplingObject", P), ("counterDataSize", SZ),
                                ("pCounterData", U8P)])
Decode = _struct("Decode", [("pPmSamplingObject", P), ("pCounterDataImage", U8P),
                            ("counterDataImageSize", SZ), ("decodeStopReason", C.c_int),
                            ("overflow", C.c_uint8)])
DataInfo = _struct("DataInfo", [("pCounterDataImage", U8P), ("counterDataImageSize", SZ),
                                ("numTotalSamples", SZ), ("numPopulatedSamples", SZ),
                                ("numCompletedSamples", SZ)])
SampleInfo = _struct("SampleInfo", [("pPmSamplingObject", P), ("pCounterDataImage", U8P),
                                    ("counterDataImageSize", SZ), ("sampleIndex", SZ),
                                    ("startTimestamp", C.c_uint64), ("endTimestamp", C.c_uint64)])

PM_SAMPLING = 1  # CUPTI_PROFILER_TYPE_PM_SAMPLING
API_PM_SAMPLING = 3  # CUPTI_PROFILER_PM_SAMPLING
TIME_INTERVAL = 1


def _load():
    tried = []
    paths = []
    sys.path.insert(0, os.path.join(ROOT, "python"))
    try:
        from rocprof.capture.cupti import library_candidates
        paths += library_candidates()
    except Exception as e:  # noqa: BLE001 - the probe works without the package
        tried.append(f"rocprof.capture.cupti: {e}")
    try:
        import torch
        lib = os.path.join(os.path.dirname(torch.__file__), "lib")
        paths += [os.path.join(lib, n) for n in sorted(os.listdir(lib)) if "cupti" in n]
    except Exception:  # noqa: BLE001
        pass
    for cuda in ("/usr/local/cuda", "/usr/local/cuda-13.0", "/usr/local/cuda-12"):
        for sub in ("lib64", "lib", "extras/CUPTI/lib64"):
            paths.append(os.path.join(cuda, sub, "libcupti.so"))
    paths.append("libcupti.so")
    for p in paths:
        try:
            return C.CDLL(p, mode=C.RTLD_GLOBAL), p
        except OSError as e:
            tried.append(f"{p}: {e}")
    sys.exit("no libcupti: " + "; ".join(tried[-4:]))


class Cupti:
    def __init__(self):
        self.lib, self.path = _load()
        get = self.lib.cuptiGetResultString
        get.argtypes = [C.c_int, C.POINTER(C.c_char_p)]

    def call(self, name, params, quiet=False):
        fn = getattr(self.lib, name, None)
        if fn is None:
            return f"{name}: not in {self.path}"
        r = fn(C.byref(params))
        if r == 0:
            return ""
        s = C.c_char_p()
        self.lib.cuptiGetResultString(r, C.byref(s))
        return f"{name}: {s.value.decode() if s.value else r}"

    def host(self, chip, avail=None):
        p = HostInit.make(profilerType=PM_SAMPLING, pChipName=chip.encode())
        if avail is not None:
            p.pCounterAvailabilityImage = C.cast(avail, U8P)
        err = self.call("cuptiProfilerHostInitialize", p)
        if err:
            raise RuntimeError(err)
        return p.pHostObject

    def free_host(self, h):
        self.call("cuptiProfilerHostDeinitialize", HostDeinit.make(pHostObject=h))


def names(strings):
    arr = (CCP * len(strings))(*[s.encode() for s in strings])
    return arr


def list_metrics(cu, chip, avail):
    h = cu.host(chip, avail)
    out = {}
    for t in range(3):
        p = BaseMetrics.make(pHostObject=h, metricType=t)
        if cu.call("cuptiProfilerHostGetBaseMetrics", p):
            continue
        out.update({p.ppMetricNames[i].decode(): t for i in range(p.numMetrics)})
    cu.free_host(h)
    return out


def check(cu, chip, avail, name):
    h = cu.host(chip, avail)
    try:
        return cu.call("cuptiProfilerHostConfigAddMetrics",
                       AddMetrics.make(pHostObject=h, ppMetricNames=names([name]), numMetrics=1))
    finally:
        cu.free_host(h)


def config_image(cu, chip, avail, metrics):
    h = cu.host(chip, avail)
    arr = names(metrics)
    err = cu.call("cuptiProfilerHostConfigAddMetrics",
                  AddMetrics.make(pHostObject=h, ppMetricNames=arr, numMetrics=len(metrics)))
    if err:
        return h, None, err
    s = ImageSize.make(pHostObject=h)
    err = cu.call("cuptiProfilerHostGetConfigImageSize", s)
    if err or s.configImageSize == 0:
        return h, None, err or "empty config image (no availability image?)"
    buf = (C.c_uint8 * s.configImageSize)()
    err = cu.call("cuptiProfilerHostGetConfigImage",
                  Image.make(pHostObject=h, configImageSize=s.configImageSize,
                             pConfigImage=C.cast(buf, U8P)))
    if err:
        return h, None, err
    p = Passes.make(configImageSize=s.configImageSize, pConfigImage=C.cast(buf, U8P))
    err = cu.call("cuptiProfilerHostGetNumOfPasses", p)
    return h, buf, err or (f"{p.numOfPasses} passes" if p.numOfPasses != 1 else "")


def host_report(cu, chip, avail):
    all_metrics = list_metrics(cu, chip, avail)
    print(f"{chip}: {len(all_metrics)} PM-sampling base metrics")
    for m in sorted(all_metrics):
        if any(k in m for k in KEYWORDS):
            print(f"  base {m} (type {all_metrics[m]})")
    good = []
    for m in CANDIDATES:
        err = check(cu, chip, avail, m)
        print(f"  candidate {m}: {'ok' if not err else err}")
        if not err:
            good.append(m)
    return good


def clocks():
    return {n: time.clock_gettime_ns(getattr(time, n)) for n in
            ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_BOOTTIME", "CLOCK_MONOTONIC_RAW")
            if hasattr(time, n)}


def collect(cu, chip, avail, metrics, hz, workload, seconds):
    """One collection at `hz`: samples, overflow, decode calls, phase means."""
    h, image, err = config_image(cu, chip, avail, metrics)
    if image is None or err:
        print(f"  config image for {len(metrics)} metrics: {err}")
        cu.free_host(h)
        return
    # As the backend does: Enable from a thread of its own, with no CUDA context current there.
    en = Enable.make(deviceIndex=0)
    box = {}
    th = threading.Thread(target=lambda: box.update(err=cu.call("cuptiPmSamplingEnable", en)))
    th.start()
    th.join()
    err = box["err"]
    print(f"  [{hz} Hz] cuptiPmSamplingEnable (own thread, no current context): {err or 'ok'}")
    if err:
        en = Enable.make(deviceIndex=0)
        err = cu.call("cuptiPmSamplingEnable", en)
        print(f"  [{hz} Hz] cuptiPmSamplingEnable (main thread): {err or 'ok'}")
    if err:
        cu.free_host(h)
        return
    obj = en.pPmSamplingObject
    sc = SetConfig.make(pPmSamplingObject=obj, configSize=len(image), pConfig=C.cast(image, U8P),
                        hardwareBufferSize=512 << 20, samplingInterval=int(1e9 / hz),
                        triggerMode=TIME_INTERVAL, hwBufferAppendMode=0)
    err = cu.call("cuptiPmSamplingSetConfig", sc)
    print(f"  [{hz} Hz] cuptiPmSamplingSetConfig (512 MiB, {int(1e9 / hz)} ns): {err or 'ok'}")
    arr = names(metrics)
    max_samples = 20000
    ds = DataSize.make(pPmSamplingObject=obj, pMetricNames=arr, numMetrics=len(metrics),
                       maxSamples=max_samples)
    err = err or cu.call("cuptiPmSamplingGetCounterDataSize", ds)
    data = (C.c_uint8 * max(ds.counterDataSize, 1))()
    err = err or cu.call("cuptiPmSamplingCounterDataImageInitialize",
                         DataInit.make(pPmSamplingObject=obj, counterDataSize=ds.counterDataSize,
                                       pCounterData=C.cast(data, U8P)))
    blank = bytes(data)
    if err:
        print(f"  [{hz} Hz] {err}")
        cu.call("cuptiPmSamplingDisable", ObjOnly.make(pPmSamplingObject=obj))
        cu.free_host(h)
        return
    print(f"  counter data image: {ds.counterDataSize} bytes for {max_samples} samples")
    samples = []  # (start, end, values)
    stats = {"decodes": 0, "overflow": 0, "full": 0, "errors": set(), "decode_s": 0.0}
    vals = (C.c_double * len(metrics))()

    def drain():
        t0 = time.perf_counter()
        d = Decode.make(pPmSamplingObject=obj, pCounterDataImage=C.cast(data, U8P),
                        counterDataImageSize=len(data))
        e = cu.call("cuptiPmSamplingDecodeData", d)
        stats["decodes"] += 1
        if e:
            stats["errors"].add(e)
        stats["overflow"] += d.overflow
        stats["full"] += d.decodeStopReason == 1
        info = DataInfo.make(pCounterDataImage=C.cast(data, U8P), counterDataImageSize=len(data))
        cu.call("cuptiPmSamplingGetCounterDataInfo", info)
        for i in range(info.numCompletedSamples):
            si = SampleInfo.make(pPmSamplingObject=obj, pCounterDataImage=C.cast(data, U8P),
                                 counterDataImageSize=len(data), sampleIndex=i)
            cu.call("cuptiPmSamplingCounterDataGetSampleInfo", si)
            ev = Evaluate.make(pHostObject=h, pCounterDataImage=C.cast(data, U8P),
                               counterDataImageSize=len(data), rangeIndex=i, ppMetricNames=arr,
                               numMetrics=len(metrics), pMetricValues=vals)
            e = cu.call("cuptiProfilerHostEvaluateToGpuValues", ev)
            if e:
                stats["errors"].add(e)
            samples.append((si.startTimestamp, si.endTimestamp, list(vals)))
        if info.numCompletedSamples:
            C.memmove(data, blank, len(blank))
        stats["decode_s"] += time.perf_counter() - t0
        return d.decodeStopReason

    c0 = clocks()
    err = cu.call("cuptiPmSamplingStart", ObjOnly.make(pPmSamplingObject=obj))
    print(f"  [{hz} Hz] cuptiPmSamplingStart: {err or 'ok'}")
    stop = threading.Event()

    def loop():
        while not stop.wait(0.02):
            drain()
    th = threading.Thread(target=loop)
    th.start()
    phases = workload(seconds) if workload else [("sleep", *_sleep(seconds))]
    stop.set()
    th.join()
    cu.call("cuptiPmSamplingStop", ObjOnly.make(pPmSamplingObject=obj))
    while drain() == 1:  # counter data full: more to decode
        pass
    drain()
    c1 = clocks()
    cu.call("cuptiPmSamplingDisable", ObjOnly.make(pPmSamplingObject=obj))
    cu.free_host(h)
    n = len(samples)
    print(f"  [{hz} Hz] {n} samples, {stats['decodes']} decodes ({stats['decode_s']:.3f} s), "
          f"overflow flags {stats['overflow']}, full {stats['full']}, errors {stats['errors']}")
    if not n:
        return
    first, last = samples[0][0], samples[-1][1]
    span = (last - first) / 1e9
    print(f"  [{hz} Hz] achieved {n / span if span > 0 else 0:.0f} Hz over {span:.3f} s; "
          f"sample length {(samples[0][1] - samples[0][0])} ns (first), gaps "
          f"{sum(1 for a, b in zip(samples, samples[1:], strict=False) if b[0] - a[1] > 2e9 / hz)}")
    for k, v in c0.items():
        print(f"  clock {k}: before {v}, first sample {first}, after {c1[k]}, "
              f"inside={'yes' if v <= first <= c1[k] else 'no'}")
    for name, t0, t1 in phases:
        sel = [s for s in samples if s[0] >= t0 and s[1] <= t1]
        if not sel:
            print(f"  phase {name}: no samples inside [{t0}, {t1}]")
            continue
        means = [sum(s[2][j] for s in sel) / len(sel) for j in range(len(metrics))]
        print(f"  phase {name}: {len(sel)} samples")
        for m, v in zip(metrics, means, strict=True):
            print(f"      {v:10.2f}  {m}")


def _sleep(seconds):
    t0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
    time.sleep(seconds)
    return t0, time.clock_gettime_ns(time.CLOCK_REALTIME)


def torch_workload():
    try:
        import torch
    except ImportError:
        return None
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    torch.cuda.synchronize()

    def run(seconds):
        out = []
        for name in ("gemm", "copy", "idle"):
            torch.cuda.synchronize()
            t0 = time.clock_gettime_ns(time.CLOCK_REALTIME)
            end = time.perf_counter() + seconds / 3
            while time.perf_counter() < end:
                if name == "gemm":
                    for _ in range(4):
                        a @ b
                elif name == "copy":
                    for _ in range(4):
                        dst.copy_(src)
                else:
                    time.sleep(0.01)
                torch.cuda.synchronize()
            out.append((name, t0, time.clock_gettime_ns(time.CLOCK_REALTIME)))
        return out
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chip", help="list this chip's metrics from CUPTI's tables (no GPU)")
    ap.add_argument("--rates", default="1000,10000,20000,50000,100000")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--match", help="only candidates matching this regex (Python re)")
    args = ap.parse_args()
    cu = Cupti()
    print(f"libcupti: {cu.path}")
    if args.chip:
        host_report(cu, args.chip, None)
        return
    workload = torch_workload()  # initialises CUDA (the probe needs a context anyway)
    if workload is None:
        cuda = C.CDLL("libcuda.so.1")
        print(f"cuInit: {cuda.cuInit(0)}")
    print(f"cuptiProfilerInitialize: {cu.call('cuptiProfilerInitialize', ProfInit.make()) or 'ok'}")
    cn = ChipName.make(deviceIndex=0)
    err = cu.call("cuptiDeviceGetChipName", cn)
    if err:
        print(err)
        return
    chip = cn.pChipName.decode()
    print(f"chip: {chip}")
    ds = DevSupported.make(cuDevice=0, api=API_PM_SAMPLING)
    err = cu.call("cuptiProfilerDeviceSupported", ds)
    print(f"cuptiProfilerDeviceSupported(PM_SAMPLING): {err or 'ok'} isSupported={ds.isSupported} "
          f"(3 = supported) arch={ds.architecture} vGpu={ds.vGpu} cc={ds.confidentialCompute}")
    av = Avail.make(deviceIndex=0)
    err = cu.call("cuptiPmSamplingGetCounterAvailability", av)
    avail = None
    if not err:
        avail = (C.c_uint8 * av.counterAvailabilityImageSize)()
        av.pCounterAvailabilityImage = C.cast(avail, U8P)
        err = cu.call("cuptiPmSamplingGetCounterAvailability", av)
    print(f"cuptiPmSamplingGetCounterAvailability: {err or 'ok'} "
          f"({av.counterAvailabilityImageSize} bytes)")
    good = host_report(cu, chip, avail)
    if args.match:
        import re

        good = [m for m in good if re.search(args.match, m)]
    # The set that fits one pass: add candidates in order while the image stays one pass.
    chosen = []
    for m in good:
        h, img, err = config_image(cu, chip, avail, chosen + [m])
        cu.free_host(h)
        print(f"  one pass with {m}: {'yes' if not err else err}")
        if not err:
            chosen.append(m)
    print(f"one-pass set ({len(chosen)}): {chosen}")
    for hz in (int(r) for r in args.rates.split(",")):
        collect(cu, chip, avail, chosen, hz, workload, args.seconds)


if __name__ == "__main__":
    main()
