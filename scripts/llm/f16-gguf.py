#!/usr/bin/env python3
"""f16-gguf.py SRC DST -- writes DST, an F16 copy of the GGUF file SRC.

Every metadata key of SRC is copied with its type (strings, numbers, bools,
arrays of them) except the reader's GGUF.* pseudo keys and
general.file_type, which becomes 1 (MOSTLY_F16). Every quantised tensor
(Q4_1, Q8_0, ...) is dequantised with gguf.quants.dequantize (float32) and
cast to float16 (numpy, round to nearest even); F32 and F16 tensors are
copied as they are; other types (integer tensors) are refused. Names,
order, shapes and the data alignment stay. So DST is the quantised model
itself in F16 (a dequantised value that float16 cannot hold exactly is
rounded), not the original F16 weights.

DST is written to DST.tmp.PID in its directory, read back and checked
against SRC (every key, type and value; every tensor's name, type, shape
and data), then renamed to DST: an interrupted or failed run leaves no DST
and removes its temporary file.

Needs the packages gguf and numpy (scripts/llm-venv.sh makes a Python
environment with them). Exit status: 0 done, 1 failed (one line
"f16-gguf: what failed" on stderr), 2 bad usage.
"""
import os
import signal
import sys


def fail(msg, code=1):
    print(f"f16-gguf: {msg}", file=sys.stderr)
    sys.exit(code)


try:
    import numpy as np
    import gguf
    from gguf import GGUFReader, GGUFWriter, GGUFValueType, GGMLQuantizationType
    from gguf.quants import dequantize
except ImportError as e:
    fail(f"cannot import gguf and numpy ({e}); run with the python that scripts/llm-venv.sh prints")

MOSTLY_F16 = 1  # llama_ftype LLAMA_FTYPE_MOSTLY_F16
KEPT = (GGMLQuantizationType.F32, GGMLQuantizationType.F16)
INTEGER = tuple(getattr(GGMLQuantizationType, n) for n in ("I8", "I16", "I32", "I64", "F64")
                if hasattr(GGMLQuantizationType, n))


def field_value(f):
    """(value, type, sub_type) of a reader field, strings as raw bytes."""
    t = f.types[0]
    if t == GGUFValueType.ARRAY:
        if len(f.types) != 2:
            raise ValueError(f"{f.name}: nested arrays are not supported")
        sub = f.types[1]
        if sub == GGUFValueType.STRING:
            return [bytes(f.parts[i]) for i in f.data], t, sub
        return [f.parts[i].tolist()[0] for i in f.data], t, sub
    if t == GGUFValueType.STRING:
        return bytes(f.parts[-1]), t, None
    return f.parts[-1].tolist()[0], t, None


def f16_of(t):
    """The float16 (or kept float32) numpy array of a reader tensor, numpy order."""
    if t.tensor_type in KEPT:
        return np.array(t.data)
    if t.tensor_type in INTEGER:
        raise ValueError(f"tensor {t.name}: type {t.tensor_type.name} has no F16 form")
    return dequantize(t.data, t.tensor_type).astype(np.float16)


def gguf_shape(t):
    return [int(x) for x in t.shape]


def convert(src, tmp):
    r = GGUFReader(src)
    arch = r.fields.get("general.architecture")
    if arch is None:
        raise ValueError("no general.architecture key")
    w = GGUFWriter(tmp, field_value(arch)[0].decode("utf-8"))
    if r.alignment != gguf.GGUF_DEFAULT_ALIGNMENT or "general.alignment" in r.fields:
        w.add_custom_alignment(r.alignment)
    seen_ftype = False
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name in ("general.architecture", "general.alignment"):
            continue
        if name == "general.file_type":
            w.add_key_value(name, MOSTLY_F16, f.types[0])
            seen_ftype = True
            continue
        val, t, sub = field_value(f)
        if t == GGUFValueType.ARRAY and not val:
            raise ValueError(f"{name}: empty arrays cannot be written by gguf's writer")
        w.add_key_value(name, val, t, sub_type=sub)
    if not seen_ftype:
        w.add_uint32("general.file_type", MOSTLY_F16)
    for t in r.tensors:
        a = f16_of(t)
        if list(reversed(a.shape)) != gguf_shape(t):
            raise ValueError(f"tensor {t.name}: numpy shape {a.shape} is not the reverse of {gguf_shape(t)}")
        # The writer takes numpy's order (rows last-dimension-major) and writes
        # it reversed, as GGUF's ne[] order.
        w.add_tensor(t.name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return r


def check(r, tmp):
    """Reads tmp back and compares it with the source reader r."""
    d = GGUFReader(tmp)
    skip = lambda k: k.startswith("GGUF.")  # noqa: E731
    ks = [k for k in r.fields if not skip(k)]
    kd = [k for k in d.fields if not skip(k)]
    if set(kd) != set(ks) | {"general.file_type"}:
        raise ValueError(f"keys differ: {sorted(set(ks) ^ set(kd))}")
    for k in ks:
        fs, fd = r.fields[k], d.fields[k]
        if [x for x in fs.types] != [x for x in fd.types]:
            raise ValueError(f"key {k}: type {fs.types} became {fd.types}")
        if k == "general.file_type":
            if field_value(fd)[0] != MOSTLY_F16:
                raise ValueError("general.file_type is not 1 (MOSTLY_F16)")
            continue
        if field_value(fs)[0] != field_value(fd)[0]:
            raise ValueError(f"key {k}: value differs after the copy")
    if d.alignment != r.alignment:
        raise ValueError(f"alignment {r.alignment} became {d.alignment}")
    if len(d.tensors) != len(r.tensors):
        raise ValueError(f"{len(r.tensors)} tensors became {len(d.tensors)}")
    for ts, td in zip(r.tensors, d.tensors):
        if ts.name != td.name:
            raise ValueError(f"tensor order differs: {ts.name} vs {td.name}")
        if gguf_shape(ts) != gguf_shape(td):
            raise ValueError(f"tensor {ts.name}: shape {gguf_shape(ts)} became {gguf_shape(td)}")
        want = GGMLQuantizationType.F32 if ts.tensor_type == GGMLQuantizationType.F32 \
            else GGMLQuantizationType.F16
        if td.tensor_type != want:
            raise ValueError(f"tensor {ts.name}: type {td.tensor_type.name}, expected {want.name}")
        a = f16_of(ts)
        b = np.asarray(td.data).reshape(a.shape)
        if a.dtype != b.dtype or not np.array_equal(a.view(np.uint8), b.view(np.uint8)):
            raise ValueError(f"tensor {ts.name}: data differs after the copy")
        # And against the dequantised source, independently of f16_of: the
        # float16 value is within half an F16 ulp of the float32 one.
        if ts.tensor_type not in KEPT:
            x = dequantize(ts.data, ts.tensor_type)
            err = np.abs(b.astype(np.float32) - x)
            tol = np.maximum(np.abs(x) * 2.0 ** -11, 2.0 ** -25) * 1.0001
            if not np.all(err <= tol):
                raise ValueError(f"tensor {ts.name}: F16 values stray from the dequantised source")


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 3:
        fail("usage: f16-gguf.py SRC DST", 2)
    src, dst = argv[1], argv[2]
    if not os.path.isfile(src):
        fail(f"{src}: no such file", 2)
    tmp = os.path.join(os.path.dirname(os.path.abspath(dst)),
                       f".{os.path.basename(dst)}.tmp.{os.getpid()}")
    def on_signal(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        r = convert(src, tmp)
        check(r, tmp)
        os.replace(tmp, dst)
    except KeyboardInterrupt:
        fail("interrupted")
    except Exception as e:
        fail(f"cannot convert {src} to {dst}: {type(e).__name__}: {e}")
    finally:  # never leave the temporary file
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
