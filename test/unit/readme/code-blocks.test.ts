import { describe, expect, it } from 'vitest';
import { extractCodeBlocks } from './code-blocks.js';

describe('extractCodeBlocks', () => {
  it('finds each fenced block with its line, language and needs', () => {
    const markdown = [
      '# Title', // 1
      '```sh', // 2
      'npm test',
      '```',
      '<!-- needs: cuda, hip -->', // 5
      '```ts', // 6
      "const fence = '```';",
      '````',
      '',
      '~~~~typescript title="x"', // 10
      '```',
      '~~~~',
    ].join('\n');
    expect(extractCodeBlocks(markdown)).toEqual([
      { line: 2, language: 'sh', code: 'npm test', needs: [] },
      { line: 6, language: 'ts', code: "const fence = '```';", needs: ['cuda', 'hip'] },
      { line: 10, language: 'typescript', code: '```', needs: [] },
    ]);
  });

  it('reads needs only from the line right before the fence', () => {
    const [block] = extractCodeBlocks(['<!-- needs: cuda -->', '', '```ts', 'x', '```'].join('\n'));
    expect(block!.needs).toEqual([]);
  });

  it('refuses an unclosed fence', () => {
    expect(() => extractCodeBlocks(['text', '```ts', 'x', '``'].join('\n'))).toThrow('line 2: code fence ``` is never closed');
  });
});
