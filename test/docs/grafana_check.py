"""test/docs/grafana_check.py — run every panel query of dashboards/fairshare.json
as a login granted only fairshare_viewer, and check the columns each panel uses.

Called by test/docs/grafana.test with the dashboard's path and a psql
command line (as a list of arguments, JSON) that connects as that login.
Grafana's time macros are replaced by the last 24 hours, as the dashboard's
default range does.  A table or bar gauge panel uses the columns its
"organize" transformation names and its field overrides match by name; a
time series panel uses time, metric and value.  Prints one "ok:"/"FAILED:"
line per check and ends with "N passed, M failed".
"""
import csv
import io
import json
import re
import subprocess
import sys

dashboard_path, psql_json = sys.argv[1], sys.argv[2]
psql = json.loads(psql_json)
dash = json.load(open(dashboard_path))
passed = failed = 0


def check(name, ok, detail=''):
    global passed, failed
    if ok:
        passed += 1
        print('ok: ' + name)
    else:
        failed += 1
        print('FAILED: ' + name + ('\n  ' + detail if detail else ''))


def expand(sql):
    """Grafana's PostgreSQL macros, over the last 24 hours."""
    frm, to = "(now() - interval '24 hours')", 'now()'
    sql = re.sub(r'\$__timeFilter\(([^)]+)\)', lambda m: '%s BETWEEN %s AND %s' % (m.group(1), frm, to), sql)
    sql = sql.replace('$__timeFrom()', frm).replace('$__timeTo()', to)
    return sql


def run(sql):
    p = subprocess.run(psql + ['--csv', '-v', 'ON_ERROR_STOP=1', '-c', sql], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return None, p.stderr.strip()
    rows = list(csv.reader(io.StringIO(p.stdout)))
    return rows, ''


check('the dashboard has panels', len(dash.get('panels', [])) >= 10, '%d panels' % len(dash.get('panels', [])))
check('every panel uses the one PostgreSQL data source input',
      all(p['datasource']['uid'] == '${DS_FAIRSHARE}' for p in dash['panels']) and
      [i['pluginId'] for i in dash['__inputs']] == ['postgres'])
for panel in dash['panels']:
    title = panel['title']
    expected = []
    for t in panel.get('transformations', []):
        if t['id'] == 'organize':
            expected += list(t['options']['indexByName'])
    for o in panel.get('fieldConfig', {}).get('overrides', []):
        if o['matcher']['id'] == 'byName':
            expected.append(o['matcher']['options'])
    for target in panel['targets']:
        label = '%s [%s]' % (title, target['refId'])
        if not target.get('rawSql'):
            check(label + ' has SQL', False)
            continue
        sql = expand(target['rawSql'])
        check(label + ': no macro left unexpanded', '$__' not in sql, sql)
        rows, err = run(sql)
        if rows is None:
            check(label + ' runs as fairshare_viewer', False, err)
            continue
        check(label + ' runs as fairshare_viewer', True)
        header, data = rows[0], rows[1:]
        if target['format'] == 'time_series':
            want = ['time', 'metric', 'value']
            check(label + ': returns time, metric, value', header == want, 'got %s' % header)
        else:
            want = expected
            missing = [c for c in want if c not in header]
            check(label + ': has every column the panel uses', want != [] and not missing,
                  'missing %s; got %s' % (missing, header))
        check(label + ': returns rows for the test data', len(data) > 0, sql)
print('%d passed, %d failed' % (passed, failed))
