# accelopt's harness for the `neuron` backend (lib/Profile/NeuronBackend.cpp
# writes this file into each run's work directory and runs it with the Neuron
# SDK's Python). It compiles and runs one kernel with nki.baremetal on the
# host's NeuronDevice: `warmup` runs, then `runs` timed runs, each saving the
# NEFF and its own execution trace (NTFF); accelopt then reads every trace with
# `neuron-profile view --output-format summary-json`. The outputs of the first
# run are saved as .npy for the numeric check.
#
#   python3 harness.py JOB.json      (JOB: see NeuronBackend.cpp, writeJob)
#
# Exit status: 0 done (result.json written), 3 the Neuron SDK's Python package
# cannot be imported, 4 numpy cannot be imported, anything else a failure
# (its traceback on stderr).
import json
import os
import sys

MISSING_SDK = 3
MISSING_NUMPY = 4


def missing(status, what):
    print("accelopt-neuron-harness: missing: " + what, file=sys.stderr)
    sys.exit(status)


def platform():
    """trn1 / trn2 from the device's host: the runtime's override, else the
    EC2 instance type (DMI product name, e.g. trn1.2xlarge); "" when unknown."""
    names = [os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "")]
    try:
        with open("/sys/devices/virtual/dmi/id/product_name") as f:
            names.append(f.read().strip())
    except OSError:
        pass
    for name in names:
        family = name.split(".")[0].lower()
        if family in ("trn1", "trn1n"):
            return "trn1"
        if family in ("trn2", "trn2u"):
            return "trn2"
    return ""


def main():
    with open(sys.argv[1]) as f:
        job = json.load(f)
    # As AccelOpt's harness: fp32 stays fp32, one NeuronCore.
    os.environ.setdefault("NEURON_CC_FLAGS", "--auto-cast=none")
    os.environ.setdefault("NEURON_RT_NUM_CORES", "1")
    try:
        import numpy as np
    except ImportError:
        missing(MISSING_NUMPY, "numpy")
    try:
        from neuronxcc import nki
        sdk = "neuronxcc.nki"
    except ImportError:
        try:
            import nki
            sdk = "nki"
        except ImportError:
            missing(MISSING_SDK, "neuronxcc.nki (nor nki)")
    if not hasattr(nki, "baremetal"):
        missing(MISSING_SDK, sdk + ".baremetal")

    import importlib.util
    spec = importlib.util.spec_from_file_location("accelopt_kernel", job["kernel_file"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, job["kernel_name"])

    args = []
    for arg in job["inputs"]:
        if "literal" in arg:
            # A non-tensor argument written as Python (`(4, 128)`, `None`, `nl.bfloat16`, `Cfg(tile=128)`),
            # evaluated in the kernel's module as accelopt's interpreter does.
            args.append(eval(arg["literal"], vars(module)))
            continue
        if "npy" not in arg:
            args.append(int(arg["scalar"]) if arg.get("int") else float(arg["scalar"]))
            continue
        array = np.load(arg["npy"])
        if arg.get("dtype") == "bfloat16":
            try:
                import ml_dtypes
                array = array.astype(ml_dtypes.bfloat16)
            except ImportError:
                pass
        args.append(array)

    options = {}
    if job.get("compile_options"):
        options["additional_compile_opt"] = job["compile_options"]
    traces = []
    outputs = None
    for i in range(job["warmup"] + job["runs"]):
        timed = i >= job["warmup"]
        ntff = os.path.join(job["dir"], ("run%d.ntff" % len(traces)) if timed else "warmup.ntff")
        run = nki.baremetal(kernel, save_neff_name=job["neff"], save_trace_name=ntff, **options)
        # The launch grid (kernel[g0, g1](...)) when the kernel has one.
        result = run[tuple(job["grid"])](*args) if job.get("grid") else run(*args)
        if outputs is None:
            outputs = result
        if timed:
            traces.append(ntff)

    if outputs is None:
        outputs = []
    elif not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    saved = []
    for i, out in enumerate(outputs):
        out = np.ascontiguousarray(np.asarray(out))
        if out.dtype.kind not in "fiub" or out.dtype.itemsize > 4:
            out = out.astype(np.float32)  # bf16 and f64 as fp32 (accelopt reads f2/f4 and ints)
        path = os.path.join(job["dir"], "output%d.npy" % i)
        np.save(path, out)
        saved.append(path)
    with open(os.path.join(job["dir"], "result.json"), "w") as f:
        json.dump({"sdk": sdk, "platform": platform(), "neff": job["neff"], "traces": traces,
                   "outputs": saved}, f)


if __name__ == "__main__":
    main()
