/**
 * `true` when two types are the same shape at every depth (each property present in both, equally optional, of
 * the same type), else `false`. Object types are rebuilt as plain mapped types first, so an interface and an
 * inferred object type of the same shape compare equal.
 */
type Plain<T> = T extends readonly unknown[]
  ? { [K in keyof T]: Plain<T[K]> }
  : T extends object
    ? { [K in keyof T]: Plain<T[K]> }
    : T;

type Identical<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export type SameShape<A, B> = Identical<Plain<A>, Plain<B>>;
