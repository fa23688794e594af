--- The version of ascope: the one place it is written. The rockspec's name, the CHANGELOG's
-- latest entry and `ascope version` follow it (a spec checks that they agree).
-- @module ascope.version
return "0.1.0"
