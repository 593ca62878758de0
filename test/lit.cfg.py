import os
import lit.formats

config.name = "accelopt"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".py", ".test", ".json"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "unit", "benchmark", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.accelopt_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.accelopt_tools_dir, "/usr/lib/llvm-14/bin", config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ("HOME", "TMPDIR", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Before %accelopt, which is a prefix of it.
config.substitutions.append(("%accelopt-lsp", os.path.join(config.accelopt_tools_dir, "accelopt-lsp")))
config.substitutions.append(("%accelopt", os.path.join(config.accelopt_tools_dir, "accelopt-rewrite")))
config.substitutions.append(("%FileCheck", config.filecheck))
config.substitutions.append(("%nkibench", config.nkibench_dir))
config.substitutions.append(("%srcroot", config.accelopt_src_root))
config.substitutions.append(("%python", "/usr/bin/python3"))

# Tests that need the NKIBench checkout beside the repo.
if os.path.isdir(config.nkibench_dir):
    config.available_features.add("nkibench")
# An ASan+UBSan build: a test whose work another test already does in-process under the sanitizers
# says `UNSUPPORTED: sanitized` (each process pays the sanitizers' start and leak check).
if config.sanitized:
    config.available_features.add("sanitized")
# Full-size runs (interpreter on whole NKIBench kernels) only under the "full" label.
if os.environ.get("ACCELOPT_LIT_FULL") == "1":
    config.available_features.add("full")
# The whole-suite optimization (`bench --optimize` over NKIBench: tens of minutes and
# several GB per kernel) only under its own "suite-optimize" label, which CI does not run.
if os.environ.get("ACCELOPT_LIT_SUITE_OPTIMIZE") == "1":
    config.available_features.add("suite-optimize")
# Migrating all 14 NKIBench kernels with full-size numeric checks (minutes, up to 16 GB at -j 2): its
# own "suite-migrate" label, which CI does not run.
if os.environ.get("ACCELOPT_LIT_SUITE_MIGRATE") == "1":
    config.available_features.add("suite-migrate")
if os.path.exists("/usr/bin/python3"):
    import subprocess
    if subprocess.call(["/usr/bin/python3", "-c", "import numpy"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
        config.available_features.add("numpy")
# A real LSP client (Neovim's built-in one) for test/LSP/neovim.test.
import shutil
if shutil.which("nvim", path=config.environment["PATH"]):
    config.available_features.add("neovim")
# A local one-node Slurm (scripts/slurm-cluster.sh) for test/Dispatch: needs the
# Debian packages munge, slurmctld, slurmd, slurm-client, and root for the daemons.
slurm_tools = ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo"]
slurm_missing = [t for t in slurm_tools if not shutil.which(t, path=os.environ.get("PATH", "") + ":/usr/sbin")]
if slurm_missing:
    lit_config.note("Slurm tests (test/Dispatch) skipped: missing " + ", ".join(slurm_missing) +
                    " (scripts/setup.sh installs munge slurmctld slurmd slurm-client)")
elif os.getuid() != 0:
    lit_config.note("Slurm tests (test/Dispatch) skipped: the local cluster's daemons run as root, this is uid %d" % os.getuid())
else:
    config.available_features.add("slurm")
config.environment["PATH"] = config.environment["PATH"] + os.pathsep + "/usr/sbin"
