// Durations written the way people write them on a command line or in an env file: 30d, 12h, 15m, 90s.

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** The longest duration accepted: ten years, so expiry dates stay far from the edge of Date. */
export const MAX_DURATION_MS = 10 * 365 * UNIT_MS.d

/** Parses `<positive integer><s|m|h|d>` into milliseconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9]\d{0,9})([smhd])$/.exec(text.trim())
  if (!match) return undefined
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
  return ms <= MAX_DURATION_MS ? ms : undefined
}
