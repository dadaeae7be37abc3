// The GraphQL face of user-interactive authentication: an AuthInput as the REST `auth` dict the domain's
// UIA (src/domain/uia/uia.ts) checks, and the domain's 401 as the typed AuthRequired result (types/uia.ts).
// uiaResult() names the union a UIA mutation returns; authRequiredOr() runs the domain operation and
// answers AuthRequired when it stops for authentication. Errors other than UIA stay GraphQL errors.
import { createUnionType, type ClassType } from "type-graphql";
import { AuthFlow, AuthRequired, type AuthInput } from "./types/uia.ts";
import { UserInteractiveAuthRequired } from "../domain/uia/uia.ts";

/** Drops null and undefined values (GraphQL's absent input fields). */
const given = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

/** The REST `auth` dict of an AuthInput (undefined when none was given). */
export function authDictOf(auth: AuthInput | null | undefined): Record<string, unknown> | undefined {
  if (!auth) return undefined;
  const { extra, identifier, ...fields } = auth;
  return { ...(extra ?? {}), ...given({ ...fields, identifier: identifier ? given({ ...identifier }) : undefined }) };
}

/** The union `<name> = <payload> | AuthRequired` of a mutation that may need UIA. */
export function uiaResult<T extends object>(name: string, payload: ClassType<T>, description: string) {
  return createUnionType({
    name,
    description: `${description} Or AuthRequired: authenticate and repeat the mutation with \`auth\`.`,
    types: () => [payload, AuthRequired] as const,
    resolveType: (v) => (v instanceof AuthRequired ? AuthRequired : payload),
  });
}

/** The AuthRequired result of the domain's UIA 401. */
export function authRequiredOf(err: UserInteractiveAuthRequired): AuthRequired {
  const b = err.body as { flows?: { stages: string[] }[]; params?: Record<string, unknown>; session?: string; completed?: string[] };
  return Object.assign(new AuthRequired(), {
    flows: (b.flows ?? []).map((f) => Object.assign(new AuthFlow(), { stages: f.stages })),
    params: b.params ?? {},
    session: b.session ?? "",
    completed: b.completed ?? [],
    errcode: err.failure?.errcode ?? null,
    error: err.failure?.message ?? null,
  });
}

/** Runs a domain operation that may stop for UIA: its result, or AuthRequired. */
export async function authRequiredOr<T>(op: () => Promise<T>): Promise<T | AuthRequired> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof UserInteractiveAuthRequired) return authRequiredOf(err);
    throw err;
  }
}
