-- Drives accelopt-lsp from Neovim's built-in LSP client (0.7 API), for
-- test/LSP/neovim.test. Run headless on the kernel file as the current buffer:
--
--   ACCELOPT_LSP=... ACCELOPT_ACTION_LINE=N ACCELOPT_ACTION_KIND=K \
--     nvim --headless --clean -u NONE -c 'luafile neovim_client.lua' kernel.py
--
-- Prints the diagnostics it received ("diagnostic LINE:COL CODE: MESSAGE") and
-- the code action it applied ("action KIND: TITLE") on stdout, writes the
-- edited buffer, and exits 0; any failure or timeout prints "FAILED: ..." on
-- stdout and exits 1 (cquit), so the test never hangs on a broken server.

local timeout_ms = 20000

local function out(line)
  io.stdout:write(line .. "\n")
end

local function fail(message)
  error(message, 0)
end

local function env(name)
  local value = os.getenv(name)
  if not value or value == "" then
    fail("environment variable " .. name .. " is not set")
  end
  return value
end

local function run()
  local server = env("ACCELOPT_LSP")
  local line = tonumber(env("ACCELOPT_ACTION_LINE")) - 1 -- 1-based in the environment
  local wanted_kind = env("ACCELOPT_ACTION_KIND")
  local bufnr = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(bufnr)
  if path == "" then
    fail("no file in the current buffer")
  end

  -- Count diagnostic pushes (even empty ones), then let the default handler store them.
  local pushes = 0
  local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
  local handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      pushes = pushes + 1
      return default_publish(err, result, ctx, config)
    end,
  }

  local exited = false
  local client_id = vim.lsp.start_client({
    name = "accelopt",
    cmd = { server },
    root_dir = vim.fn.fnamemodify(path, ":h"),
    init_options = { inputs = { [vim.fn.fnamemodify(path, ":t")] = os.getenv("ACCELOPT_INPUTS") or "" } },
    handlers = handlers,
    on_exit = function(code)
      exited = true
      if code ~= 0 then
        io.stdout:write("server exited with " .. tostring(code) .. "\n")
      end
    end,
  })
  if not client_id then
    fail("could not start " .. server)
  end
  if not vim.lsp.buf_attach_client(bufnr, client_id) then
    fail("could not attach the client")
  end

  local client
  if not vim.wait(timeout_ms, function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized and pushes > 0
  end, 20) then
    fail("no diagnostics within " .. timeout_ms .. " ms (initialized: " .. tostring(client and client.initialized) .. ")")
  end

  local diagnostics = vim.diagnostic.get(bufnr)
  table.sort(diagnostics, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  out("diagnostics: " .. #diagnostics)
  for _, d in ipairs(diagnostics) do
    out(string.format("diagnostic %d:%d %s: %s", d.lnum + 1, d.col + 1, tostring(d.code), d.message))
  end

  -- The actions at the loop header, as Neovim's own code_action() would ask for them.
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = line, character = 4 }, ["end"] = { line = line, character = 4 } },
    context = { diagnostics = {}, only = { wanted_kind } },
  }
  local response, err = client.request_sync("textDocument/codeAction", params, timeout_ms, bufnr)
  if not response then
    fail("textDocument/codeAction: " .. tostring(err))
  end
  if response.err then
    fail("textDocument/codeAction: " .. vim.inspect(response.err))
  end
  local chosen
  for _, action in ipairs(response.result or {}) do
    if action.kind == wanted_kind and not action.disabled then
      chosen = action
      break
    end
  end
  if not chosen then
    fail("no enabled " .. wanted_kind .. " action at line " .. (line + 1) .. ": " .. vim.inspect(response.result))
  end

  -- The server computes edits lazily: resolve when the action has none.
  if not chosen.edit then
    local resolved, rerr = client.request_sync("codeAction/resolve", chosen, timeout_ms, bufnr)
    if not resolved or resolved.err then
      fail("codeAction/resolve: " .. vim.inspect(rerr or resolved.err))
    end
    chosen = resolved.result
    if not chosen.edit then
      fail("resolved action has no edit: " .. vim.inspect(chosen))
    end
  end
  out("action " .. chosen.kind .. ": " .. chosen.title)
  vim.lsp.util.apply_workspace_edit(chosen.edit, "utf-16")
  vim.cmd("write")

  vim.lsp.stop_client(client_id)
  if not vim.wait(timeout_ms, function()
    return exited
  end, 20) then
    fail("the server did not exit after shutdown")
  end
end

local ok, message = pcall(run)
if ok then
  vim.cmd("qall!")
else
  out("FAILED: " .. tostring(message))
  vim.cmd("cquit 1")
end
