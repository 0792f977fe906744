// "Copy as curl / as code": the same createTask request the playground sends, with an API key instead of the session.

export type Lang = 'curl' | 'javascript' | 'python';

export function snippet(lang: Lang, origin: string, body: unknown): string {
  const json = JSON.stringify(body, null, 2);
  const url = `${origin}/api/v1/jobs/createTask`;
  switch (lang) {
    case 'curl':
      return [
        `curl -X POST '${url}' \\`,
        `  -H "Authorization: Bearer $GENGATE_API_KEY" \\`,
        `  -H 'Content-Type: application/json' \\`,
        `  -d '${JSON.stringify(body).replace(/'/g, `'\\''`)}'`,
      ].join('\n');
    case 'javascript':
      return [
        `const res = await fetch('${url}', {`,
        `  method: 'POST',`,
        `  headers: { Authorization: \`Bearer \${process.env.GENGATE_API_KEY}\`, 'Content-Type': 'application/json' },`,
        `  body: JSON.stringify(${json.replace(/\n/g, '\n  ')}),`,
        `});`,
        `const { data } = await res.json(); // data.taskId`,
      ].join('\n');
    case 'python':
      return [
        'import json, os, urllib.request',
        '',
        `body = json.loads(${JSON.stringify(JSON.stringify(body))})`,
        `req = urllib.request.Request('${url}', data=json.dumps(body).encode(), method='POST', headers={`,
        `    'Authorization': 'Bearer ' + os.environ['GENGATE_API_KEY'], 'Content-Type': 'application/json'})`,
        `print(json.load(urllib.request.urlopen(req))['data']['taskId'])`,
      ].join('\n');
  }
}
