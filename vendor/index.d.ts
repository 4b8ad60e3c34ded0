// Types of `quiver-live-native/vendor` (vendor/index.js).

/** A platform key: `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ... */
export type VendorPlatform = string

/** Options of {@link vendor}. */
export interface VendorOptions {
  /** Platform keys, a comma-separated list, `current` or `all`. Default: every platform with a binary available. */
  platforms?: VendorPlatform | VendorPlatform[]
  /** A skill's live directory to integrate the bundle into (see {@link writeShims}). */
  shims?: string | null
  /** Replace a non-empty directory that holds no bundle, or shims over changed files. Default `false`. */
  force?: boolean
  /** The package whose version and binaries are vendored (the JavaScript is always this package's). Default: this package. */
  packageDir?: string
}

/** One binary written into a bundle. */
export interface VendoredBinary {
  platform: VendorPlatform
  file: string
  size: number
  sha256: string
  /** `local build` or `quiver-live-native-<platform>@<version>`. */
  source: string
}

/** What {@link writeShims} did. */
export interface ShimsReport {
  liveDir: string
  /** The bundle as implementation.mjs names it: a relative URL ending in `/`. */
  bundle: string
  moved: Array<{ from: string; to: string }>
  written: string[]
}

/** What {@link vendor} wrote. */
export interface VendorReport {
  dir: string
  version: string
  platforms: VendoredBinary[]
  binaryBytes: number
  totalBytes: number
  shims: ShimsReport | null
}

/** Writes a self-contained copy of the package into `dir`; the folder appears whole or not at all. */
export declare function vendor(dir: string, options?: VendorOptions): VendorReport

/** Integrates a vendored bundle into a skill's live directory (session-store.mjs and source-lock.mjs become shims). */
export declare function writeShims(liveDir: string, bundleDir: string, options?: { force?: boolean }): ShimsReport

/** The error {@link vendor} and {@link writeShims} throw for a request they refuse. */
export declare class VendorError extends Error {
  constructor(message: string, code?: string)
  name: 'VendorError'
  code: 'QLN_USAGE' | 'QLN_NO_BINARY' | 'QLN_UNKNOWN_PLATFORM' | 'QLN_NOT_A_BUNDLE' | 'QLN_SHIMS_REFUSED'
}
