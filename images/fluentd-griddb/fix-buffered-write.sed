# write-up 000's one-line fix of fluent-plugin-griddb 1.0.2 (lib/fluent/plugin/out_griddb.rb): the buffered
# write(chunk) path calls handle_record, which 1.0.2 does not implement (NoMethodError: every chunk becomes a bad
# chunk in the backup directory); make it call handle_insert_type, the method the working unbuffered path uses.
s/handle_record(record_array)/handle_insert_type(record_array)/
