// Small constructors for the model in types.ts, so kernels read close to the PTX they print.
// They only shape data; every check happens once, when the module is printed.
import type {
  Block, Comment, Instruction, Label, Operand, ParamDecl, PtxParam, PtxType, Pragma, RegisterDecl,
  LocalVariable, PtxVariable, Statement,
} from './types.js'

/** What `ins` accepts per operand: an Operand, a register name ('%r1'), a symbol name, or an integer. */
export type OperandLike = Operand | string | number | bigint

export function reg(name: string): Operand {
  return { kind: 'reg', name }
}

export function sym(name: string): Operand {
  return { kind: 'sym', name }
}

/** An integer immediate. */
export function imm(value: number | bigint): Operand {
  return { kind: 'imm', value, type: 'int' }
}

/** A single-precision immediate, printed exactly as 0fXXXXXXXX. */
export function f32(value: number): Operand {
  return { kind: 'imm', value, type: 'f32' }
}

/** A double-precision immediate, printed exactly as 0dXXXXXXXXXXXXXXXX. */
export function f64(value: number): Operand {
  return { kind: 'imm', value, type: 'f64' }
}

/** `[base]` or `[base+offset]`. */
export function addr(base: string, offset?: number): Operand {
  return offset === undefined ? { kind: 'addr', base } : { kind: 'addr', base, offset }
}

export function vec(...elems: OperandLike[]): Operand {
  return { kind: 'vec', elems: elems.map(operand) }
}

export function list(...elems: OperandLike[]): Operand {
  return { kind: 'list', elems: elems.map(operand) }
}

/** Strings starting with '%' are registers, other strings symbols, numbers integer immediates. */
export function operand(value: OperandLike): Operand {
  if (typeof value === 'string') return value.startsWith('%') ? reg(value) : sym(value)
  if (typeof value === 'number' || typeof value === 'bigint') return imm(value)
  return value
}

export function ins(opcode: string, ...operands: OperandLike[]): Instruction {
  return { kind: 'inst', opcode, operands: operands.map(operand) }
}

/** `@pred inst`. */
export function when(pred: string, inst: Instruction): Instruction {
  return { ...inst, guard: { pred } }
}

/** `@!pred inst`. */
export function unless(pred: string, inst: Instruction): Instruction {
  return { ...inst, guard: { pred, negate: true } }
}

/** `.reg .type name<count>;` (registers name0..name{count-1}) or, without count, one register. */
export function regs(type: PtxType, name: string, count?: number): RegisterDecl {
  return count === undefined ? { kind: 'reg', type, name } : { kind: 'reg', type, name, count }
}

export function label(name: string): Label {
  return { kind: 'label', name }
}

export function pragma(value: string): Pragma {
  return { kind: 'pragma', value }
}

export function comment(text: string): Comment {
  return { kind: 'comment', text }
}

export function local(variable: PtxVariable): LocalVariable {
  return { kind: 'var', variable }
}

export function block(...body: Statement[]): Block {
  return { kind: 'block', body }
}

export function paramDecl(param: PtxParam): ParamDecl {
  return { kind: 'param', param }
}

export function param(name: string, type: PtxType, extra: Omit<PtxParam, 'name' | 'type'> = {}): PtxParam {
  return { name, type, ...extra }
}

/** A kernel pointer parameter: `.param .u64 .ptr .global .align <align> name`. */
export function globalPtr(name: string, align: number): PtxParam {
  return { name, type: 'u64', ptr: { space: 'global', align } }
}
