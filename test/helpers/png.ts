import { inflateSync } from 'node:zlib';

/** A decoded PNG: 8-bit RGBA pixels, row by row. */
export interface DecodedPng {
  width: number;
  height: number;
  rgba: Uint8Array;
}

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

/**
 * Decodes the PNGs resvg writes (8-bit, RGBA or RGB, not interlaced) with node's zlib: the IDAT
 * chunks inflated, then each row's filter reversed. resvg only encodes, and no PNG decoder is
 * installed; this is all the reference-image comparison needs.
 */
export function decodePng(file: Buffer): DecodedPng {
  if (!file.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let colourType = 0;
  const idat: Buffer[] = [];
  while (offset < file.length) {
    const length = file.readUInt32BE(offset);
    const type = file.toString('latin1', offset + 4, offset + 8);
    const data = file.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      colourType = data[9]!;
      if (depth !== 8 || (colourType !== 6 && colourType !== 2) || data[12] !== 0)
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${data[12]}`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  const channels = colourType === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const at = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[at + x - channels]! : 0;
      const b = y > 0 ? out[at - stride + x]! : 0;
      const c = x >= channels && y > 0 ? out[at - stride + x - channels]! : 0;
      let v = row[x]!;
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[at + x] = v & 0xff;
    }
  }
  if (channels === 4) return { width, height, rgba: out };
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    rgba.set(out.subarray(i * 3, i * 3 + 3), i * 4);
    rgba[i * 4 + 3] = 255;
  }
  return { width, height, rgba };
}

/** The share of pixels (0..1) whose colour differs by more than `threshold` in some channel. */
export function pixelDifference(a: DecodedPng, b: DecodedPng, threshold = 48): number {
  if (a.width !== b.width || a.height !== b.height) return 1;
  let differing = 0;
  const pixels = a.width * a.height;
  for (let i = 0; i < pixels; i++) {
    for (let ch = 0; ch < 4; ch++) {
      if (Math.abs(a.rgba[i * 4 + ch]! - b.rgba[i * 4 + ch]!) > threshold) {
        differing++;
        break;
      }
    }
  }
  return differing / pixels;
}

/** The pixel at (x, y) as `[r, g, b, a]`. */
export function pixelAt(png: DecodedPng, x: number, y: number): number[] {
  const i = (y * png.width + x) * 4;
  return Array.from(png.rgba.subarray(i, i + 4));
}
