-- TRUNCATE bypasses row triggers: refuse it too, so the audit log stays append-only.
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change();
