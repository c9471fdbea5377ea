import { describe, expect, it } from 'vitest';
import { Logger, type LogLevel } from '../../../src/compute/core/logger.js';

describe('Logger', () => {
  it('delivers messages at or above its level only', () => {
    const seen: [LogLevel, string][] = [];
    const logger = new Logger((level, message) => seen.push([level, message]), 'info');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(seen).toEqual([['info', 'i'], ['warn', 'w'], ['error', 'e']]);
    expect(logger.enabled('debug')).toBe(false);
    expect(logger.enabled('error')).toBe(true);
  });

  it('drops everything when silent and defaults to warn', () => {
    const seen: string[] = [];
    const silent = new Logger((_l, m) => seen.push(m), 'silent');
    silent.error('x');
    const byDefault = new Logger((_l, m) => seen.push(m));
    byDefault.info('not shown');
    byDefault.warn('shown');
    expect(seen).toEqual(['shown']);
  });
});
