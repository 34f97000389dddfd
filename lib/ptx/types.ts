// The typed model of a PTX module. It is plain data: build it with object literals or the helpers in
// build.ts, normalize it with normalizeModule (launch-bounds.ts), print it with printModule (print.ts).
import type { GpuName } from './targets.js'

/** Fundamental PTX types (PTX ISA "Fundamental Types"), without the leading dot. */
export type PtxType =
  | 'pred'
  | 'b8' | 'b16' | 'b32' | 'b64' | 'b128'
  | 'u8' | 'u16' | 'u32' | 'u64'
  | 's8' | 's16' | 's32' | 's64'
  | 'f16' | 'f16x2' | 'bf16' | 'bf16x2' | 'f32' | 'f64'

/** State spaces a variable can live in. */
export type StateSpace = 'global' | 'shared' | 'const' | 'local'

/** Linkage of a module-level variable or a function. */
export type Linkage = 'visible' | 'extern' | 'weak' | 'common'

/** A 1-, 2- or 3-dimensional extent; a bare number means [n]. Missing dimensions are 1 to ptxas. */
export type Dim3 = number | readonly [number] | readonly [number, number] | readonly [number, number, number]

/**
 * Performance directives of an `.entry` (PTX ISA "Performance-Tuning Directives" and the cluster
 * directives). What may be combined is decided by normalizeLaunchBounds, not by this type.
 */
export interface LaunchBounds {
  /** `.maxntid`: the most threads a CTA of this kernel is ever launched with. */
  maxntid?: Dim3
  /** `.reqntid`: the exact CTA shape every launch uses. */
  reqntid?: Dim3
  /** `.minnctapersm`: CTAs that should fit on one SM; only meaningful with maxntid or reqntid. */
  minnctapersm?: number
  /** `.maxnreg`: register cap per thread. */
  maxnreg?: number
  /** `.reqnctapercluster`: the exact cluster shape (sm_90 and up). */
  reqnctapercluster?: Dim3
  /** `.explicitcluster`: launches must give cluster dimensions. */
  explicitcluster?: boolean
  /** `.maxclusterrank`: the most CTAs in a cluster. */
  maxclusterrank?: number
  /** `.blocksareclusters`: every CTA is its own cluster shape (PTX ISA 9.0). */
  blocksareclusters?: boolean
}

/** A `.param` of an entry or function. */
export interface PtxParam {
  name: string
  /** Any type but `bf16` and `bf16x2`, which are instruction types only (bf16 data is `.b16`). */
  type: PtxType
  /** `.align n` (bytes, a power of two). */
  align?: number
  /** Makes it an array param: `.param .b8 name[length]`. */
  length?: number
  /** Kernel pointer attribute: `.ptr .global .align 4` (entries only, PTX 2.2+). */
  ptr?: { space: StateSpace; align?: number }
}

/** A variable: module-level (`.global`, `.shared`, `.const`) or inside a body (`.shared`, `.local`). */
export interface PtxVariable {
  space: StateSpace
  name: string
  /** Any type but `pred` (predicates live in registers), `bf16` and `bf16x2` (instruction types only). */
  type: PtxType
  /** Module-level variables only; `common` on `.global` only. */
  linkage?: Linkage
  align?: number
  /**
   * An array; 'unsized' prints `name[]`: an `.extern` array (e.g. dynamic shared memory), or one as
   * long as its `init`.
   */
  length?: number | 'unsized'
  /** Initializer for `.global` / `.const` variables of an integer or bit-size type. */
  init?: readonly (number | bigint)[]
}

/** An operand of an instruction. Use the helpers in build.ts rather than writing these by hand. */
export type Operand =
  /** A register or special register: `%r1`, `%tid.x`, `%cluster_ctarank`. */
  | { kind: 'reg'; name: string }
  /** An integer immediate, or an exact float immediate printed as 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX. */
  | { kind: 'imm'; value: number | bigint; type?: 'int' | 'f32' | 'f64' }
  /** A variable, param, function or label name. */
  | { kind: 'sym'; name: string }
  /** A memory operand: `[base]`, `[base+offset]`; base a register or a symbol name. */
  | { kind: 'addr'; base: string; offset?: number }
  /** A vector operand: `{%f1, %f2}`. */
  | { kind: 'vec'; elems: readonly Operand[] }
  /** A parenthesized list, for call return values and arguments: `(%r1, %r2)`. */
  | { kind: 'list'; elems: readonly Operand[] }

export interface Instruction {
  kind: 'inst'
  /** Dotted opcode with modifiers, e.g. `ld.global.f32`, `mapa.shared::cluster.u32`. */
  opcode: string
  operands: readonly Operand[]
  /** Guard predicate: `@%p1` or, negated, `@!%p1`. */
  guard?: { pred: string; negate?: boolean }
}

/** `.reg .f32 %f<4>;` declares %f0..%f3; without count, one register named exactly `name`. */
export interface RegisterDecl {
  kind: 'reg'
  /** Any type but `bf16` and `bf16x2`, which are instruction types only (bf16 data is `.b16`). */
  type: PtxType
  name: string
  count?: number
}

export interface Label { kind: 'label'; name: string }

/** `.pragma "nounroll";` at statement level: applies to the loop whose header holds it. */
export interface Pragma { kind: 'pragma'; value: string }

/** A `//` comment line: printable ASCII (ptxas refuses any other byte, even in a comment). */
export interface Comment { kind: 'comment'; text: string }

/** A `.shared` or `.local` variable declared inside a body. */
export interface LocalVariable { kind: 'var'; variable: PtxVariable }

/** A nested `{ ... }` scope, e.g. around the `.param` declarations of a call. */
export interface Block { kind: 'block'; body: readonly Statement[] }

/** A `.param` declared inside a body (call arguments and return values). */
export interface ParamDecl { kind: 'param'; param: PtxParam }

export type Statement = RegisterDecl | Label | Instruction | Pragma | Comment | LocalVariable | Block | ParamDecl

/** A kernel: `.entry`. Only entries carry performance directives. */
export interface PtxEntry {
  kind: 'entry'
  name: string
  /** 'extern' is refused: it declares an entry defined elsewhere, and an entry is printed with its body. */
  linkage?: 'visible' | 'weak' | 'extern'
  params: readonly PtxParam[]
  launchBounds?: LaunchBounds
  /** Entry-level pragmas, printed after the directives: `.pragma "nounroll";`. */
  pragmas?: readonly string[]
  body: readonly Statement[]
}

/** A device function: `.func`. Without a body it is a prototype (`.extern .func f(...);`), which may precede the definition, with the same head, so that functions can call each other. */
export interface PtxFunc {
  kind: 'func'
  name: string
  linkage?: 'visible' | 'weak' | 'extern'
  returns?: readonly PtxParam[]
  params: readonly PtxParam[]
  body?: readonly Statement[]
}

export type PtxFunction = PtxEntry | PtxFunc

export interface PtxModule {
  target: GpuName
  /** `.version`; chosen from the target (ptxIsaFor) when absent. */
  version?: string
  /** Only 64-bit addressing: 32-bit was removed for the targets this emitter knows. */
  addressSize?: 64
  /** Module-level pragmas, printed after `.address_size`. */
  pragmas?: readonly string[]
  variables?: readonly PtxVariable[]
  functions: readonly PtxFunction[]
}
