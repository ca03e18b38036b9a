-- wrk script for the benchmark: optionally POST a body read from a file, then print the run's
-- figures as one JSON line (latencies in microseconds).
--
--   wrk -t1 -c64 -d3s -s tests/bench/wrk.lua URL                        -- GET
--   wrk -t1 -c64 -d3s -s tests/bench/wrk.lua URL -- BODY_FILE [TYPE]    -- POST BODY_FILE

function init(args)
  if args[1] ~= nil then
    local file = assert(io.open(args[1], "rb"))
    wrk.method = "POST"
    wrk.body = file:read("*a")
    file:close()
    wrk.headers["Content-Type"] = args[2] or "text/plain;charset=UTF-8"
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
