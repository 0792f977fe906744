/** The success envelope of every /api/v1 response. */
export function ok<T>(data: T): { code: 200; msg: 'success'; data: T } {
  return { code: 200, msg: 'success', data };
}

/** The same envelope as JSON text around `dataJson`, already JSON text (the same text JSON.stringify(ok(data)) gives). */
export function okJson(dataJson: string): string {
  return `{"code":200,"msg":"success","data":${dataJson}}`;
}

/** The error envelope; `data` is null except on 402. */
export function failure(code: number, error: string, msg: string, data: unknown = null) {
  return { code, msg, data, error };
}
