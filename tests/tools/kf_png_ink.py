#!/usr/bin/env python3
"""kf_png_ink.py PNG: prints "WIDTH HEIGHT COLOURS INK" for a screenshot
(8-bit RGB or RGBA, as Chromium writes them): the distinct colours and the
pixels that are not white, so a test can tell a rendered page from a
blank or failed one. Standard library only; exits 1 on anything else."""
import struct
import sys
import zlib


def main(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('not a PNG')
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    if not w or depth != 8 or ctype not in (2, 6):
        sys.exit('unexpected PNG format')
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours, ink = bytearray(stride), set(), 0
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            px = bytes(line[x:x + 3])
            colours.add(px)
            ink += px != b'\xff\xff\xff'
        prev = line
    print(w, h, len(colours), ink)


if __name__ == '__main__':
    main(sys.argv[1])
