// The baseline's response: a fixed ~1 KB JSON envelope with two asset-like records.
const asset = (id: number) => ({
  id, company_id: 1, asset_no: `A1-${id}`, serial_no: `SN-${100000 + id}`, description: 'Torque wrench 20-100 Nm',
  status: 'Active', next_check: '2025-03-01', last_check: '2024-03-01', period: 12, location_id: 3, department_id: 2,
  external_type_id: null, date_added: '2021-06-14', data: { costcode: 'P-10', manufacturer: 'Norbar' }, modified: '2024-03-01 09:12:44',
});

export const STATIC_BODY = JSON.stringify({
  request: { url: '/static', endpoint: 'static', requested_version: '3.0', api_version: 3, request_method: 'Get', timestamp: 1507558417, session: null },
  pagination: { total_pages: 1, total_records: 2 },
  response: [asset(1), asset(2)],
});
