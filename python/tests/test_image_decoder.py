"""ImageDecoder against Pillow, ONNX's reference for it (Note [ImageDecoder], lib/Ops/Misc.cpp).

Images are made here with Pillow (python3-pil) in each format and mode it writes; the
evaluator's pixels must equal Pillow's decoding of the same bytes, turned to RGB, BGR
(channels reversed) or Grayscale (Pillow's "L" conversion) as the spec's [H, W, C].
"""
import io

import numpy as np
import pytest

import onnxir

Image = pytest.importorskip("PIL.Image")


def decoder(fmt):
    return onnxir.loads(f"""<ir_version: 9, opset_import: ["" : 20]>
g (uint8[N] data) => (uint8[H,W,C] img) {{ img = ImageDecoder <pixel_format = "{fmt}"> (data) }}
""".encode(), format="text", name=f"decoder-{fmt}.onnxtxt")


def encode(img, fmt, **kw):
    with io.BytesIO() as f:
        img.save(f, format=fmt, **kw)
        return np.frombuffer(f.getvalue(), np.uint8)


def reference(data, fmt):
    img = Image.open(io.BytesIO(data.tobytes()))
    if fmt == "Grayscale":
        return np.asarray(img.convert("L"))[:, :, None]
    rgb = np.asarray(img.convert("RGB"))
    return rgb[:, :, ::-1] if fmt == "BGR" else rgb


def checkerboard(h=37, w=29, tile=5, seed=12345):
    rng = np.random.default_rng(seed)
    colors = rng.integers(0, 256, size=(h // tile + 1, w // tile + 1, 3), dtype=np.uint8)
    img = colors.repeat(tile, 0).repeat(tile, 1)[:h, :w]
    # Some noise, so that JPEG's blocks are not flat.
    return np.clip(img.astype(np.int16) + rng.integers(-20, 21, img.shape), 0, 255).astype(np.uint8)


def images():
    rgb = Image.fromarray(checkerboard())
    rgba = rgb.copy()
    rgba.putalpha(Image.fromarray(checkerboard(seed=7)[:, :, 0]))
    pal = rgb.quantize(colors=13)
    pal_trns = pal.copy()
    pal_trns.info["transparency"] = 3
    cases = [
        ("JPEG", rgb, {}),
        ("JPEG", rgb, {"quality": 95, "subsampling": 0}),
        ("JPEG", rgb.convert("L"), {}),
        ("JPEG", rgb, {"progressive": True}),
        ("PNG", rgb, {}),
        ("PNG", rgb.convert("L"), {}),
        ("PNG", rgba, {}),
        ("PNG", rgba.convert("LA"), {}),
        ("PNG", pal, {}),
        ("PNG", pal_trns, {}),
        ("PNG", rgb.convert("1"), {}),
        ("BMP", rgb, {}),
        ("BMP", pal, {}),
        ("BMP", rgb.convert("L"), {}),
        ("BMP", rgb.convert("1"), {}),
        ("PPM", rgb, {}),
        ("PPM", rgb.convert("L"), {}),
    ]
    return [pytest.param(f, i, kw, id=f"{n}-{f}-{i.mode}") for n, (f, i, kw) in enumerate(cases)]


@pytest.mark.parametrize("fmt", ["RGB", "BGR", "Grayscale"])
@pytest.mark.parametrize("file_format,img,kw", images())
def test_decodes_as_pillow(file_format, img, kw, fmt):
    data = encode(img, file_format, **kw)
    got = onnxir.run(decoder(fmt), {"data": data})["img"]
    want = reference(data, fmt)
    assert got.dtype == np.uint8
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_sixteen_bit_png_keeps_high_bytes():
    # Pillow reads a 16-bit gray PNG as 32-bit integers ("I;16"), not as
    # 8-bit pixels; the evaluator keeps each sample's high byte.
    v = (np.arange(12 * 7, dtype=np.uint16).reshape(12, 7) * 781).astype(np.uint16)
    img = Image.frombytes("I;16", (7, 12), v.astype("<u2").tobytes())
    data = encode(img, "PNG")
    got = onnxir.run(decoder("Grayscale"), {"data": data})["img"]
    np.testing.assert_array_equal(got[:, :, 0], (v >> 8).astype(np.uint8))


@pytest.mark.parametrize("file_format,mode,says", [
    ("TIFF", "RGB", "ImageDecoder: TIFF input"),
    ("JPEG", "CMYK", "ImageDecoder: CMYK JPEG input"),
])
def test_refused_formats_are_not_supported(file_format, mode, says):
    data = encode(Image.fromarray(checkerboard()).convert(mode), file_format)
    with pytest.raises(onnxir.NotSupportedError,
                       match=r'not supported: node #0 \(ImageDecoder\) in graph "g": ' + says):
        onnxir.run(decoder("RGB"), {"data": data})


@pytest.mark.parametrize("file_format", ["JPEG", "PNG", "BMP", "PPM"])
def test_truncated_files_are_errors(file_format):
    # Pillow refuses a file cut in half; so does the evaluator (for JPEG,
    # rather than libjpeg's gray fill of the missing rows).
    data = encode(Image.fromarray(checkerboard()), file_format)
    cut = data[: len(data) // 2]
    with pytest.raises(OSError):
        Image.open(io.BytesIO(cut.tobytes())).load()
    with pytest.raises(onnxir.EvalError, match="ImageDecoder: .*(truncated|Premature end)"):
        onnxir.run(decoder("RGB"), {"data": cut})
