"""The optional compiled parts of iou-eval (the project's metadata is in pyproject.toml).

Each C file is built where a C compiler is at hand and left out where it
cannot be: the install goes on, and numpy, pycocotools and msgspec give the
same numbers (``iou-eval --version`` names each part and whether it runs).
``IOU_EVAL_PURE=1`` builds a pure-Python wheel (``py3-none-any``): the
fallback for platforms without a compiled wheel.

Flags: -O2 and no fused multiply-add or fast-math (GCC and Clang:
``-ffp-contract=off``; MSVC: ``/fp:precise``, and the sources turn
contractions off with ``#pragma fp_contract(off)``): the numbers must not
depend on the machine that built the wheel.
"""

import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# Module -> source; iou_eval.engine.compiled.PARTS names them for --version.
PARTS = {
    "iou_eval.geometry._rlekernel": "iou_eval/geometry/_rlekernel.c",
    "iou_eval.geometry._boxkernel": "iou_eval/geometry/_boxkernel.c",
    "iou_eval.geometry._kptkernel": "iou_eval/geometry/_kptkernel.c",
    "iou_eval.geometry._polykernel": "iou_eval/geometry/_polykernel.c",
    "iou_eval.io._cocojson": "iou_eval/io/_cocojson.c",
    "iou_eval.io._csvscan": "iou_eval/io/_csvscan.c",
    "iou_eval.protocols._cococore": "iou_eval/protocols/_cococore.c",
}


class BuildExt(build_ext):
    """Each compiler's spelling of the same flags."""

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "msvc":
            flags = ["/O2", "/fp:precise"]
        else:
            flags = ["-O2", "-ffp-contract=off", "-fno-fast-math"]
        for ext in self.extensions:
            ext.extra_compile_args = flags
        super().build_extensions()


PURE = os.environ.get("IOU_EVAL_PURE", "") not in ("", "0")

# The headers the C files include (buffers, array checks, growable arrays;
# box overlaps; decimal numbers to doubles): a change to one rebuilds them
# all.  MANIFEST.in ships them in the sdist.
COMMON = ["iou_eval/_common.h", "iou_eval/geometry/_bbiou.h", "iou_eval/io/_numparse.h"]

setup(
    ext_modules=[]
    if PURE
    else [Extension(n, [src], depends=COMMON, optional=True) for n, src in PARTS.items()],
    cmdclass={"build_ext": BuildExt},
)
