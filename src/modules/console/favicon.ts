// The console's icon, /favicon.ico: three rising bars in white on the console's accent blue, drawn
// here as a 32×32 icon (one 32-bit BMP image in an ICO container) so the repository holds no binary
// and every tab of the console has an icon instead of a 404.
const SIZE = 32;
const ACCENT = [0x05, 0x50, 0xae] as const; // --accent in src/console/styles.css (R, G, B)
/** Each bar: its left and right column and its top row (from the top; they all end at row 25). */
const BARS = [
  { left: 7, right: 11, top: 17 },
  { left: 14, right: 18, top: 12 },
  { left: 21, right: 25, top: 6 },
];
const BASELINE = 25;
const CORNER = 6;

/** What is at (x, y), y from the top: a bar, the rounded square behind it, or nothing. */
function pixel(x: number, y: number): 'bar' | 'square' | 'none' {
  // Outside the rounded corners: transparent.
  const cx = x < CORNER ? CORNER - x - 0.5 : x >= SIZE - CORNER ? x - (SIZE - CORNER) + 0.5 : 0;
  const cy = y < CORNER ? CORNER - y - 0.5 : y >= SIZE - CORNER ? y - (SIZE - CORNER) + 0.5 : 0;
  if (cx * cx + cy * cy > CORNER * CORNER) return 'none';
  if (BARS.some((bar) => x >= bar.left && x <= bar.right && y >= bar.top && y <= BASELINE)) return 'bar';
  return 'square';
}

let icon: Uint8Array | null = null;

/** The bytes of the icon (made once). */
export function faviconBytes(): Uint8Array {
  if (icon) return icon;
  const pixels = SIZE * SIZE * 4;
  const mask = SIZE * (SIZE / 8); // 1 bit a pixel, rows of 4 bytes: all zero (the alpha channel decides)
  const image = 40 + pixels + mask;
  const bytes = new Uint8Array(6 + 16 + image);
  const view = new DataView(bytes.buffer);
  // ICONDIR: reserved, type 1 (icon), one image.
  view.setUint16(2, 1, true);
  view.setUint16(4, 1, true);
  // ICONDIRENTRY: width, height, no palette, planes 1, 32 bits a pixel, the image's size and offset.
  bytes[6] = SIZE;
  bytes[7] = SIZE;
  view.setUint16(10, 1, true);
  view.setUint16(12, 32, true);
  view.setUint32(14, image, true);
  view.setUint32(18, 22, true);
  // BITMAPINFOHEADER: its height counts the image and its mask (twice the icon's).
  const header = 22;
  view.setUint32(header, 40, true);
  view.setInt32(header + 4, SIZE, true);
  view.setInt32(header + 8, SIZE * 2, true);
  view.setUint16(header + 12, 1, true);
  view.setUint16(header + 14, 32, true);
  view.setUint32(header + 20, pixels + mask, true);
  // Pixels in BGRA, bottom row first.
  let at = header + 40;
  for (let row = SIZE - 1; row >= 0; row--) {
    for (let x = 0; x < SIZE; x++) {
      const what = pixel(x, row);
      const [r, g, b] = what === 'bar' ? [0xff, 0xff, 0xff] : ACCENT;
      bytes[at++] = b;
      bytes[at++] = g;
      bytes[at++] = r;
      bytes[at++] = what === 'none' ? 0 : 0xff;
    }
  }
  return (icon = bytes);
}
