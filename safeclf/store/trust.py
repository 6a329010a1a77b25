"""Which objects a model file may hold: an explicit allow-list, checked before skops reads it.

A skops file is a zip of ``.npy`` arrays and a ``schema.json`` that describes, node by node,
the objects to build: each node names a loader (``ObjectNode``, ``FunctionNode``, ...) and a
``module.name``. skops refuses the types it does not trust, but it trusts by default every
scikit-learn estimator (``FunctionTransformer`` among them, which calls whatever function it
holds) and numpy's and scipy's functions. A model file is data a user may have been handed, so
safeclf decides alone what may be built: :func:`check_file` reads ``schema.json`` as plain
JSON, visits every node, and refuses the file unless each node's loader is one of
:data:`LOADERS` and its type one of the concrete types safeclf itself writes
(:data:`TRUSTED_TYPES`). No name prefix is trusted, no function, method, ``partial``,
``operator`` callable or reduce constructor is ever built. Only then is the file given to skops,
with exactly the trusted types the file holds.

``tests/store/test_model_trust.py`` saves a fitted model of every registered method and checks that
each type it holds is on the list, so the list can only grow by a reviewed edit here.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from safeclf.errors import SpecError

#: skops loaders a safeclf model uses. Functions, methods, partials, ``operator`` callables,
#: general reduce constructors, bytes and defaultdicts are never part of one. ``LossNode``
#: builds one of the loss objects in :data:`_SKLEARN` (SGDClassifier's) from numbers.
LOADERS = frozenset({"ObjectNode", "DictNode", "ListNode", "TupleNode", "SetNode", "JsonNode",
                     "NdArrayNode", "DTypeNode", "TypeNode", "SparseMatrixNode", "SliceNode",
                     "RandomStateNode", "RandomGeneratorNode", "CachedNode", "LossNode"})

#: Plain values and containers.
_BUILTINS = ("builtins.dict", "builtins.list", "builtins.tuple", "builtins.set",
             "builtins.str", "builtins.int", "builtins.float", "builtins.bool",
             "builtins.NoneType", "builtins.complex", "builtins.slice")

#: numpy arrays, scalars and dtypes; random states; scipy sparse matrices and arrays.
_NUMERIC = ("numpy.ndarray", "numpy.dtype", "numpy.float64", "numpy.float32", "numpy.float16",
            "numpy.int64", "numpy.int32", "numpy.int16", "numpy.int8", "numpy.uint64",
            "numpy.uint32", "numpy.uint16", "numpy.uint8", "numpy.bool_", "numpy.bool",
            "numpy.str_", "numpy.random.mtrand.RandomState",
            "numpy.random._generator.Generator", "numpy.random._pcg64.PCG64",
            "numpy.random._mt19937.MT19937",
            "numpy.dtypes.Float64DType", "numpy.dtypes.Float32DType", "numpy.dtypes.Int64DType",
            "numpy.dtypes.Int32DType", "numpy.dtypes.BoolDType", "numpy.dtypes.StrDType",
            "scipy.sparse._csr.csr_matrix", "scipy.sparse._csc.csc_matrix",
            "scipy.sparse._csr.csr_array", "scipy.sparse._csc.csc_array")

#: The scikit-learn objects safeclf's pipelines, baselines and model classes hold (as objects
#: and, in budgeted selection's model classes, as types).
_SKLEARN = ("sklearn.pipeline.Pipeline",
            "sklearn.preprocessing._data.StandardScaler",
            "sklearn.preprocessing._data.MinMaxScaler",
            "sklearn.preprocessing._data.MaxAbsScaler",
            "sklearn.impute._base.SimpleImputer",
            "sklearn.linear_model._logistic.LogisticRegression",
            "sklearn.linear_model._stochastic_gradient.SGDClassifier",
            "sklearn.svm._classes.LinearSVC",
            "sklearn.svm._classes.SVC",
            "sklearn._loss._loss.CyHalfBinomialLoss",
            "sklearn._loss._loss.CyHalfSquaredError",
            "sklearn._loss._loss.CyHuberLoss",
            "sklearn.linear_model._sgd_fast.Hinge",
            "sklearn.linear_model._sgd_fast.ModifiedHuber",
            "sklearn.linear_model._sgd_fast.SquaredHinge",
            "sklearn.linear_model._sgd_fast.EpsilonInsensitive",
            "sklearn.linear_model._sgd_fast.SquaredEpsilonInsensitive")

#: safeclf's own estimators and the objects they keep after fitting.
_SAFECLF = ("safeclf.plugins.contract.MethodPlugin",
            "safeclf.methods.baselines.SVMClassifier",
            "safeclf.methods.mcsvm.estimator.MultiCostSVM",
            "safeclf.methods.mcsvm.kernels.Kernel",
            "safeclf.methods.mcsvm.calibration.Offset",
            "safeclf.methods.mcsvm.safe_region.GaussianSafeRegion",
            "safeclf.methods.proset.model.ProsetClassifier",
            # the report's peers keep arrays and XGBoost's model as JSON text, no library object
            "safeclf.methods.proset.peers.ReportKNN",
            "safeclf.methods.proset.peers.ReportXGBoost",
            "safeclf.methods.robust_socp.estimator.RobustSOCPClassifier",
            "safeclf.methods.ramp.estimator.RampClassifier",
            "safeclf.methods.ramp.thresholded.ThresholdedSVM",
            "safeclf.methods.ramp.zafar.ZafarSVM",
            "safeclf.methods.ramp.group_thresholds.GroupThresholds",
            "safeclf.methods.ramp.fairlearn_eg.FairlearnEG",
            "safeclf.methods.ramp.threshold.Threshold",
            "safeclf.guarantees.rates.Coverage",
            "safeclf.guarantees.rates.ErrorRate",
            "safeclf.guarantees.rates.Accuracy",
            "safeclf.guarantees.rates.Egregious",
            "safeclf.guarantees.rates.Recall",
            "safeclf.guarantees.rates.FalsePositiveRate",
            "safeclf.guarantees.rates.FalseNegativeRate",
            "safeclf.guarantees.rates.Churn",
            "safeclf.guarantees.rates.BoundConstraint",
            "safeclf.guarantees.rates.RatioConstraint",
            "safeclf.guarantees.rates.ObjectiveTerm",
            "safeclf.guarantees.rates.Objective",
            "safeclf.methods.selection.estimator.BudgetedSelection",
            "safeclf.methods.selection.classes.ModelClass",
            "safeclf.methods.selection.classes.Trainer",
            "safeclf.methods.selection.procedures.Selection",
            "safeclf.methods.selection.wrappers.FeaturePrefix",
            "safeclf.methods.selection.wrappers.ClassChoice",
            # a rule certified post hoc (safeclf/guarantees/certify/threshold.py) and what it keeps
            "safeclf.guarantees.certify.threshold.CertifiedClassifier",
            "safeclf.guarantees.certify.threshold.Rule",
            "safeclf.guarantees.group_encoding.GroupEncoding",
            "safeclf.guarantees.promises.Promise",
            "safeclf.guarantees.rates.Quantity",
            # what is measured: stated in promises until the rate vocabulary moved to rates
            "safeclf.guarantees.promises.Quantity")

#: Every ``module.name`` a model file may hold.
TRUSTED_TYPES = frozenset(_BUILTINS + _NUMERIC + _SKLEARN + _SAFECLF)

#: Modules whose types model files written before the package was regrouped into subpackages
#: (model format 1) name, and where those types live now: such a file is read with its type
#: paths translated (:func:`translated`), checked against the same allow-list.
MOVED = {"safeclf.certified": "safeclf.guarantees.certify.threshold",
         "safeclf.group_encoding": "safeclf.guarantees.group_encoding",
         "safeclf.promises": "safeclf.guarantees.promises",
         # the rate vocabulary, once the ramp plug-in's, now the core's (issue 33)
         "safeclf.methods.ramp.rates": "safeclf.guarantees.rates"}

#: Bounds on the schema read before anything else: its size, nesting and node count.
MAX_SCHEMA_BYTES = 64 * 2**20
MAX_DEPTH = 200
MAX_NODES = 2_000_000


def _nodes(schema):
    """Every node of ``schema`` (a dict with ``__loader__``), iteratively, whatever key holds
    it; raises ``ValueError`` past :data:`MAX_DEPTH` or :data:`MAX_NODES`."""
    stack, seen = [(schema, 0)], 0
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            seen += 1
            if seen > MAX_NODES:
                raise ValueError(f"more than {MAX_NODES:,} entries")
            if "__loader__" in value or "__class__" in value or "__module__" in value:
                yield value
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


#: Default of :data:`MAX_MODEL_ENV`: the most bytes a model file may unpack to, in all.
DEFAULT_MAX_MODEL_BYTES = 512 * 2**20
#: The environment variable that raises (or lowers) the limit, in bytes.
MAX_MODEL_ENV = "SAFECLF_MAX_MODEL_BYTES"
#: The most a member may unpack to per stored byte; numpy arrays of a fitted model compress
#: far less (a constant array of 512 MiB deflates about 1000-fold).
MAX_RATIO = 200
#: Members smaller than this are never refused for their ratio (a tiny file compresses oddly).
_RATIO_FLOOR = 2**20


def max_model_bytes() -> int:
    """The size limit on a model file's unpacked contents: :data:`MAX_MODEL_ENV` when set to a
    positive integer, else :data:`DEFAULT_MAX_MODEL_BYTES`."""
    import os

    raw = os.environ.get(MAX_MODEL_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_MODEL_BYTES
    if not raw.isdigit() or int(raw) <= 0:
        raise SpecError(f"{MAX_MODEL_ENV}={raw!r} is not a positive number of bytes")
    return int(raw)


def check_sizes(path: Path) -> None:
    """Refuse, with one line, model file ``path`` when its members would unpack to more than
    :func:`max_model_bytes` (in all or any one of them) or one unpacks to more than
    :data:`MAX_RATIO` times its stored size (a zip bomb). Only the zip's directory is read:
    nothing is decompressed or allocated."""
    limit = max_model_bytes()
    raise_it = f"(raise the limit with {MAX_MODEL_ENV}=<bytes> if you trust this file)"
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except zipfile.BadZipFile:
        raise SpecError(f"'{path}' is not a readable safeclf model file (not a zip archive)") \
            from None
    except OSError as exc:
        raise SpecError(f"'{path}' is not a readable safeclf model file ({exc})") from None
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > limit:
            raise SpecError(f"model file '{path}': member '{info.filename}' unpacks to "
                            f"{info.file_size} bytes, over the limit of {limit} {raise_it}")
        if info.file_size > _RATIO_FLOOR \
                and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise SpecError(f"model file '{path}': member '{info.filename}' unpacks to "
                            f"{info.file_size} bytes from {info.compress_size} (more than "
                            f"{MAX_RATIO} times), which no saved model does; refusing it as a "
                            "zip bomb")
    if total > limit:
        raise SpecError(f"model file '{path}' unpacks to {total} bytes in all, over the limit "
                        f"of {limit} {raise_it}")


def _type_name(node: dict) -> str:
    module, name = node.get("__module__"), node.get("__class__")
    if not isinstance(module, str) or not isinstance(name, str):
        raise ValueError("a node without a type name")
    return f"{module}.{name}"


def _schema(path: Path) -> dict:
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("schema.json")
            if info.file_size > MAX_SCHEMA_BYTES:
                raise ValueError(f"its schema is larger than {MAX_SCHEMA_BYTES // 2**20} MiB")
            text = archive.read(info)
    except KeyError:
        raise ValueError("no schema.json inside") from None
    except zipfile.BadZipFile:
        raise ValueError("not a zip archive") from None
    try:
        schema = json.loads(text)
    except RecursionError:  # json's decoder recurses once per level of nesting
        raise ValueError("its schema is nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("its schema is not JSON") from None
    if not isinstance(schema, dict):
        raise ValueError("its schema is not an object")
    return schema


def _moved(node: dict) -> dict:
    """``node`` with its module translated by :data:`MOVED` (the node itself when unmoved)."""
    module = node.get("__module__")
    return node | {"__module__": MOVED[module]} if module in MOVED else node


def translated(path: Path) -> bytes | None:
    """The bytes of model file ``path`` with every type path of :data:`MOVED` translated to
    where the type lives now, or None when the file names none (nothing to translate). Only
    ``schema.json`` changes; the arrays are copied as they are."""
    import io

    schema = _schema(path)
    nodes = [n for n in _nodes(schema) if n.get("__module__") in MOVED]
    if not nodes:
        return None
    for node in nodes:
        node["__module__"] = MOVED[node["__module__"]]
    out = io.BytesIO()
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = json.dumps(schema).encode() if info.filename == "schema.json" \
                else source.read(info)
            target.writestr(info, data)
    return out.getvalue()


def check_file(path: Path) -> list[str]:
    """The trusted type names ``path`` holds, after checking every node of its schema; raises
    :class:`~safeclf.errors.SpecError` (one line naming the first refused type or loader, or
    why the file cannot be read) otherwise. Its sizes are checked first
    (:func:`check_sizes`). Nothing of the file is built or imported here."""
    check_sizes(path)
    try:
        schema = _schema(path)
        found: set[str] = set()
        for node in _nodes(schema):
            loader = node.get("__loader__")
            if loader not in LOADERS:
                raise SpecError(f"model file '{path}' holds a {loader!s} "
                                f"('{_type_name(node)}'), which safeclf never loads; refusing it")
            found.add(_type_name(_moved(node)))
    except (ValueError, OSError) as exc:
        if isinstance(exc, SpecError):
            raise
        raise SpecError(f"'{path}' is not a readable safeclf model file ({exc})") from None
    refused = sorted(found - TRUSTED_TYPES)
    if refused:
        more = f" and {len(refused) - 1} more" if len(refused) > 1 else ""
        raise SpecError(f"model file '{path}' holds the type '{refused[0]}'{more}, which is not "
                        "among the types safeclf writes; refusing to load it")
    return sorted(found)
