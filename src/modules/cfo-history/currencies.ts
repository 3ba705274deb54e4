// Currencies as ISO 4217 knows them (through the runtime's ICU data, no list of our own), and exact
// conversion of minor units at a decimal rate.
const KNOWN = new Set(Intl.supportedValuesOf('currency'));

export const isIsoCurrency = (code: string): boolean => /^[A-Z]{3}$/.test(code) && KNOWN.has(code);

const digitsCache = new Map<string, number>();

/** Digits of the minor unit: 2 for EUR, 0 for JPY, 3 for BHD. */
export function minorDigits(code: string): number {
  let digits = digitsCache.get(code);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsCache.set(code, digits);
  }
  return digits;
}

/** Rates carry at most this many decimals (the column is numeric(24, 12)). */
export const RATE_DECIMALS = 12;
/** Room for a difference of minor-unit digits between two currencies (ISO's range is 0 to 4). */
const SHIFT = 4;
/** Converted amounts are exact fractions over this denominator until rounded. */
export const EXACT_SCALE = 10n ** BigInt(RATE_DECIMALS + SHIFT);

/** `rate` (a decimal string) as an integer of RATE_DECIMALS decimals. */
export function rateUnits(rate: string): bigint {
  const [whole = '0', fraction = ''] = rate.split('.');
  return BigInt(whole) * 10n ** BigInt(RATE_DECIMALS) + BigInt(fraction.padEnd(RATE_DECIMALS, '0').slice(0, RATE_DECIMALS) || '0');
}

/** `minor` units of `from` in units of `to`'s minor unit, exactly: a numerator over EXACT_SCALE. */
export function convertExact(minor: number, rate: bigint, from: string, to: string): bigint {
  const shift = SHIFT + minorDigits(to) - minorDigits(from);
  return BigInt(minor) * rate * 10n ** BigInt(shift);
}

/** An exact amount rounded to the minor unit, half away from zero. */
export function roundExact(exact: bigint): number {
  const negative = exact < 0n;
  const magnitude = negative ? -exact : exact;
  const rounded = (magnitude + EXACT_SCALE / 2n) / EXACT_SCALE;
  return Number(negative ? -rounded : rounded);
}

/** A rate as the API accepts it: a positive decimal of at most 12 digits each side of the point. */
export const RATE_PATTERN = '^(0|[1-9][0-9]{0,11})(\\.[0-9]{1,12})?$';
