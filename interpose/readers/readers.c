/* readers.c - the table of readers, made from rules/backend.h's FBR_READERS: a reader added
 * there and defined nowhere (FBC_READER_OPS(ID) in the file that reads its calls) is a link
 * error, never a call read as none. */
#include "readers.h"

#define FBC_READER_DECLARE(id, name) extern const fbc_reader_ops FBC_READER_OPS(id);
FBR_READERS(FBC_READER_DECLARE)
#undef FBC_READER_DECLARE

const fbc_reader_ops *fbc_reader(fbr_reader id)
{
    static const fbc_reader_ops *const table[FBR_READ_COUNT] = {
#define FBC_READER_ENTRY(id, name) [FBR_READ_##id] = &FBC_READER_OPS(id),
        FBR_READERS(FBC_READER_ENTRY)
#undef FBC_READER_ENTRY
    };
    return (unsigned)id < FBR_READ_COUNT ? table[id] : table[FBR_READ_NONE];
}
