"""kiln's exceptions: the C++ runtime's error classes (include/kiln/kiln.h), as Python classes.

Every one derives from kiln.Error. The extension raises them with their details as attributes.
"""


class Error(Exception):
    """Anything kiln reports."""


class SpecError(Error, ValueError):
    """A spec that does not parse or check; `file`, `line` and `column` (also `col`) locate the
    first error, and str() shows the line with a caret under it."""

    file = ""
    line = 0
    column = 0

    @property
    def col(self):
        return self.column


class ArgumentError(Error, ValueError):
    """A wrong argument: an op, dim or const name, a tensor's dtype, rank, shape or device."""


class ShapeError(ArgumentError):
    """A tensor whose rank or extents do not fit the op: a rank or constant extent other than
    declared, a dim bound to two values ("dim N is 7 from a.shape[1] but 6 from b.shape[0]"), a
    size constraint that fails, a shape other than the one an Executable was specialized for."""


class CompileError(Error):
    """NVRTC failed, or is missing; `log` is its log and `source` the unit it compiled."""

    log = ""
    source = ""


class CudaError(Error):
    """The driver failed; `call`, `code` and `code_name` say which call and how."""

    call = ""
    code = 0
    code_name = ""


class IoError(Error, OSError):
    """A file kiln reads or writes (a spec, a pack, the cache)."""


class UnsupportedError(Error, NotImplementedError):
    """A valid spec that this version of kiln has no kernel template for."""


class InternalError(Error):
    """kiln itself is wrong: a bug to report."""
